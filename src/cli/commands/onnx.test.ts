// `lwm export --to onnx` and `lwm generate --backend onnx`, in process: the tiny chat Llama
// (src/model/fixtures/hf/llama-chat, with a tokenizer and a chat template) exported to ONNX and run
// through onnxruntime-web gives the ids transformers' generate() recorded (generate.json, by
// scripts/fixtures/hf_tiny_models.py), for a prompt and for a chat message; a GPT-2-style
// checkpoint of ours exports with the Hugging Face export's config and tokenizer files; one-line
// errors for a folder without ONNX files and a graph that is not a causal-LM decoder.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awbMessages, turnRequestFromRecord } from '../../core/bench/awbLayout.ts';
import type { AwbSampleRecord } from '../../core/bench/records.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint.ts';
import { loadHfModel } from '../../model/hf/load.ts';
import { loadOnnxModel } from '../../model/onnx/load.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { GraphBuilder, serializeModel, valueInfo, DataType } from '../../model/onnx/graph.ts';
import { generateRef } from '../../reference/gpt.ts';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

const CHAT = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const GPT2 = fileURLToPath(new URL('../../model/hf/fixtures/export/untied.safetensors', import.meta.url));
const recorded = JSON.parse(readFileSync(join(CHAT, 'generate.json'), 'utf8')) as Record<
  'prompt' | 'chat',
  { input: string; prompt_ids: number[]; ids: number[]; text: string }
> & { max_new_tokens: number };
const tmp = mkdtempSync(join(tmpdir(), 'lwm-onnx-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const LLAMA = join(tmp, 'llama-onnx');

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

beforeAll(async () => {
  const r = await run('export', CHAT, '--to', 'onnx', '-o', LLAMA);
  expect(r.code, r.err).toBe(0);
});

describe('lwm export --to onnx', () => {
  it("writes onnx/model.onnx beside the Hugging Face folder's config, generation and tokenizer files (copied)", () => {
    expect(readdirSync(LLAMA).sort()).toEqual(['config.json', 'generation_config.json', 'onnx', 'tokenizer.json', 'tokenizer_config.json']);
    expect(readdirSync(join(LLAMA, 'onnx'))).toEqual(['model.onnx']);
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'])
      expect(readFileSync(join(LLAMA, f))).toEqual(readFileSync(join(CHAT, f)));
    // The weights are the model's f32 parameters, once (the tied head is the embedding).
    expect(statSync(join(LLAMA, 'onnx', 'model.onnx')).size).toBeLessThan(statSync(join(CHAT, 'model.safetensors')).size * 1.2);
  });

  it("a GPT-2-style checkpoint of ours gets the Hugging Face export's config and tokenizer files", async () => {
    const onnxDir = join(tmp, 'gpt2-onnx');
    const hfDir = join(tmp, 'gpt2-hf');
    expect((await run('export', GPT2, '--to', 'onnx', '-o', onnxDir)).code).toBe(0);
    expect((await run('export', GPT2, '--to', 'hf', '-o', hfDir)).code).toBe(0);
    for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'])
      expect(readFileSync(join(onnxDir, f))).toEqual(readFileSync(join(hfDir, f)));
    expect(existsSync(join(onnxDir, 'onnx', 'model.onnx'))).toBe(true);
    expect(existsSync(join(onnxDir, 'model.safetensors'))).toBe(false);
  });

  it('a checkpoint of ours keeps the template it was trained with (lwm_template.json), which the loaded folder renders turns with', async () => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(GPT2)));
    const mine = { ...BUILTIN_TEMPLATES.v0, version: 'mine', description: 'a layout of its own', text: `MY LAYOUT\n${BUILTIN_TEMPLATES.v0.text}` };
    const trained = join(tmp, 'trained.safetensors');
    writeFileSync(
      trained,
      saveCheckpoint({ ...ck, extraMetadata: { ...ck.extraMetadata, spec: JSON.stringify({ stage: 'sft', templates: { mine: 1 }, templateSet: { mine } }) } }),
    );
    const dir = join(tmp, 'trained-onnx');
    const r = await run('export', trained, '--to', 'onnx', '-o', dir);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('lwm_template.json');
    expect(JSON.parse(readFileSync(join(dir, 'lwm_template.json'), 'utf8'))).toEqual(mine);
    const m = await loadOnnxModel(await nodeFolder(dir), { executionProvider: 'wasm' });
    expect(m.template).toEqual(mine);
    m.decoder.dispose();
    // A checkpoint without a training spec keeps the template the checkpoint backend gives it (v0).
    const plain = join(tmp, 'plain-onnx');
    expect((await run('export', GPT2, '--to', 'onnx', '-o', plain)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(plain, 'lwm_template.json'), 'utf8')).version).toBe('v0');
  });

  it('a folder that is not a model is one line, exit 1', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const r = await run('export', empty, '--to', 'onnx', '-o', join(tmp, 'never'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^lwm export: .*config\.json/);
    expect(existsSync(join(tmp, 'never'))).toBe(false);
  });
});

describe('lwm generate on an ONNX folder', () => {
  it.each(['prompt', 'chat'] as const)("--%s: transformers' greedy ids, the folder detected as ONNX", async (kind) => {
    const want = recorded[kind];
    const r = await run('generate', '--model', LLAMA, `--${kind}`, want.input, '--max-tokens', String(recorded.max_new_tokens), '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ prompt_ids: want.prompt_ids, ids: want.ids, text: want.text });
  });

  it('--backend onnx says so too, and a seed makes sampling repeatable', async () => {
    const argv = [
      'generate',
      '--model',
      LLAMA,
      '--backend',
      'onnx',
      '--prompt',
      recorded.prompt.input,
      '--max-tokens',
      '6',
      '--temperature',
      '0.9',
      '--top-k',
      '20',
      '--seed',
      '7',
      '--json',
    ];
    const a = await run(...argv);
    const b = await run(...argv);
    expect(a.code, a.err).toBe(0);
    expect(a.out).toBe(b.out);
    expect(JSON.parse(a.out).ids).toHaveLength(6);
  });

  it('--backend onnx on a folder without onnx/*.onnx names what is missing', async () => {
    const r = await run('generate', '--model', CHAT, '--backend', 'onnx', '--prompt', 'a');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/has no ONNX model \(onnx\/\*\.onnx\)/);
  });

  it('a graph that is not a causal-LM decoder: the missing inputs and outputs are named', async () => {
    const dir = join(tmp, 'encoder');
    mkdirSync(join(dir, 'onnx'), { recursive: true });
    writeFileSync(join(dir, 'config.json'), '{}');
    writeFileSync(join(dir, 'tokenizer.json'), readFileSync(join(CHAT, 'tokenizer.json')));
    const g = new GraphBuilder();
    g.node('Identity', ['input_ids'], {}, 'last_hidden_state');
    const { model } = serializeModel(g, {
      graphName: 'encoder',
      inputs: [valueInfo('input_ids', DataType.INT64, ['batch', 'seq'])],
      outputs: [valueInfo('last_hidden_state', DataType.INT64, ['batch', 'seq'])],
      externalDataName: 'model.onnx_data',
    });
    writeFileSync(join(dir, 'onnx', 'model.onnx'), model);
    const r = await run('generate', '--model', dir, '--prompt', 'a');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /is not a causal-LM decoder in Hugging Face's ONNX layout: missing input attention_mask, output logits, inputs past_key_values\.N\.key/,
    );
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
});

describe('lwm infer --backend onnx', () => {
  const AWB = [
    {
      task: 'agentworldbench/terminal',
      id: 'a_t1',
      prompt: ['### Turn 1\n**Action:**\nls'],
      response: ['**Environment Observation:**\na.txt'],
      system_str: 'You simulate a shell.',
      turn_idx: 1,
      total_turns: 2,
    },
    {
      task: 'agentworldbench/terminal',
      id: 'a_t2',
      prompt: ['### Turn 1\n**Action:**\nls', '### Turn 2\n**Action:**\ncat a.txt'],
      response: ['**Environment Observation:**\na.txt', '**Environment Observation:**\nhi'],
      system_str: 'You simulate a shell.',
      turn_idx: 2,
      total_turns: 2,
    },
  ];

  it("predicts each record with the chat template over the AgentWorldBench layout: our reference model's greedy tokens", async () => {
    const file = join(tmp, 'awb.jsonl');
    writeFileSync(file, AWB.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const r = await run('infer', file, '--backend', 'onnx', '--model', LLAMA, '--max-tokens', '5');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('onnx:llama-onnx 2/2');
    const got = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AwbSampleRecord & { gen: string });
    const big = Number.MAX_SAFE_INTEGER;
    const m = await loadHfModel(await nodeFolder(CHAT), { limits: { maxBufferSize: big, maxStorageBufferBindingSize: big, memoryBudget: big } });
    const tok = m.tokenizer!;
    got.forEach((rec, i) => {
      expect(rec).toMatchObject(AWB[i]);
      const ids = tok.encodeChat(
        awbMessages(turnRequestFromRecord(rec)).map((x) => ({ role: x.role, content: x.content })),
        { addGenerationPrompt: true },
      );
      const prompt = ids.slice(Math.max(0, ids.length - (m.config.contextLength - 5)));
      const want = [];
      for (const id of generateRef(m.params, m.config, prompt, { maxNewTokens: 5, temperature: 0 })) {
        if (m.stopIds.includes(id)) break;
        want.push(id);
      }
      expect(rec.gen).toBe(tok.decode(want));
    });
    expect(got.every((g) => g.gen.length > 0)).toBe(true);
  });

  it('needs --model DIR', async () => {
    const r = await run('infer', join(tmp, 'awb.jsonl'), '--backend', 'onnx');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--backend onnx needs --model DIR/);
  });
});

describe('--variant: which model file of an ONNX folder', () => {
  // The folder's model.onnx, the 4-bit model_q4.onnx of scripts/fixtures/onnx_variants.py (with Python
  // onnxruntime's greedy ids), and a model_fp16.onnx that is not an ONNX file: only a command that opens it fails.
  const DIR = join(tmp, 'variants');
  const file = join(tmp, 'awb-variant.jsonl');
  const VARIANTS = fileURLToPath(new URL('../../model/onnx/fixtures/llama-chat-variants', import.meta.url));
  const python = JSON.parse(readFileSync(join(VARIANTS, 'variants.json'), 'utf8')) as { prompt_ids: number[]; steps: number; greedy: Record<string, number[]> };
  beforeAll(() => {
    cpSync(LLAMA, DIR, { recursive: true });
    writeFileSync(join(DIR, 'onnx', 'model_fp16.onnx'), 'not an ONNX model');
    cpSync(join(VARIANTS, 'model_q4.onnx'), join(DIR, 'onnx', 'model_q4.onnx'));
    writeFileSync(
      file,
      JSON.stringify({
        task: 'agentworldbench/terminal',
        id: 'v_t1',
        prompt: ['### Turn 1\n**Action:**\nls'],
        response: ['**Environment Observation:**\na.txt'],
        system_str: 'You simulate a shell.',
        turn_idx: 1,
        total_turns: 1,
      }) + '\n',
    );
  });

  it('lwm infer: fp32 and the file name both open onnx/model.onnx (the default), with the same predictions', async () => {
    const base = await run('infer', file, '--backend', 'onnx', '--model', DIR, '--max-tokens', '4');
    expect(base.code, base.err).toBe(0);
    for (const v of ['fp32', 'model.onnx']) {
      const r = await run('infer', file, '--backend', 'onnx', '--model', DIR, '--variant', v, '--max-tokens', '4');
      expect(r.code, r.err).toBe(0);
      expect(r.out).toBe(base.out);
    }
  });

  it('lwm infer and lwm generate open the variant named: a broken model_fp16.onnx is the error', async () => {
    const i = await run('infer', file, '--backend', 'onnx', '--model', DIR, '--variant', 'fp16', '--max-tokens', '4');
    expect(i.code).toBe(1);
    expect(i.err).toMatch(/variants\/onnx\/model_fp16\.onnx: onnxruntime-web cannot load it/);
    const g = await run('generate', '--model', DIR, '--variant', 'fp16', '--prompt', 'a');
    expect(g.code).toBe(1);
    expect(g.err).toMatch(/variants\/onnx\/model_fp16\.onnx: onnxruntime-web cannot load it/);
  });

  it("--variant q4 runs the 4-bit model in onnxruntime-web with Python onnxruntime's greedy ids (and fp32 the full-precision one's)", async () => {
    for (const [variant, name] of [
      ['q4', 'model_q4.onnx'],
      ['fp32', 'model.onnx'],
    ]) {
      const r = await run('generate', '--model', DIR, '--variant', variant, '--chat', recorded.chat.input, '--max-tokens', String(python.steps), '--json');
      expect(r.code, r.err).toBe(0);
      const out = JSON.parse(r.out) as { prompt_ids: number[]; ids: number[] };
      expect(out.prompt_ids).toEqual(python.prompt_ids);
      expect(out.ids).toEqual(python.greedy[name]);
    }
    // Quantized weights change this random model's greedy tokens: the file run is the one named.
    expect(python.greedy['model_q4.onnx']).not.toEqual(python.greedy['model.onnx']);
  });

  it('a variant the folder does not have: the error lists the ONNX files it has', async () => {
    const i = await run('infer', file, '--backend', 'onnx', '--model', DIR, '--variant', 'int8');
    expect(i.code).toBe(1);
    expect(i.err).toMatch(/variants: has no model_int8\.onnx \(its ONNX files: model\.onnx, model_fp16\.onnx, model_q4\.onnx\)/);
    const g = await run('generate', '--model', DIR, '--variant', 'int8', '--prompt', 'a');
    expect(g.code).toBe(1);
    expect(g.err).toMatch(/variants: has no model_int8\.onnx \(its ONNX files: model\.onnx, model_fp16\.onnx, model_q4\.onnx\)/);
  });

  it('--variant belongs to --backend onnx', async () => {
    const r = await run('infer', file, '--backend', 'copy-last', '--variant', 'q4');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--variant is for --backend onnx/);
  });
});
