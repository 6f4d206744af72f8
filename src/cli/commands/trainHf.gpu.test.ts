// `lwm train --from HF_FOLDER --lora R` on the GPU, end to end through the CLI: the adapter folder
// in PEFT's layout (with our Adam state beside it and the best checkpoint under best/), a resume
// with --from DIR, and `lwm export` of the folder merged into a Llama folder and unmerged.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureIO } from '../testing.ts';
import { readSafetensors } from '../../core/model/safetensors.ts';
import exportCommand from './export.ts';
import generate from './generate.ts';
import infer from './infer.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { toAgentWorldBenchRecords } from '../../core/formats/agentworldbench.ts';
import train from './train.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));

async function trainRun(...argv: string[]) {
  const io = captureIO();
  const code = await train(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** The training data of the LoRA runs: 12 terminal trajectories in a temporary folder. */
async function loraData(dir: string): Promise<string> {
  const data = join(dir, 'data.jsonl');
  const gen = (await import('./gen.ts')).default;
  expect(await gen(['--domain', 'terminal', '--n', '12', '--seed', '1', '-o', data], captureIO())).toBe(0);
  return data;
}

const LORA = ['--stage', 'sft', '--batch', '2', '--tokens', '64', '--eval-every', '2', '--lora', '2', '--lora-targets', 'q,v,down', '--steps', '2'];

/** The LoRA run both LoRA tests start from (on the f32 base), trained once. */
let loraF32: Promise<{ dir: string; data: string; out: string; r: Awaited<ReturnType<typeof trainRun>> }> | null = null;
function firstLoraRun() {
  loraF32 ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-train-lora-'));
    const data = await loraData(dir);
    const out = join(dir, 'adapter');
    return { dir, data, out, r: await trainRun(...LORA, '--data', data, '--from', FOLDER, '-o', out) };
  })();
  return loraF32;
}
afterAll(async () => {
  const run = await loraF32?.catch(() => null);
  if (run) await rm(run.dir, { recursive: true, force: true });
});

/** The `[sft i/N] ... loss X` figures of a run's log, in order. */
function trainLosses(stderr: string): number[] {
  return [...stderr.matchAll(/\[sft \d+\/\d+\].*?(?:^|\s)loss ([\d.]+)/gm)].map((m) => Number(m[1]));
}

describe('lwm train --from a Hugging Face folder', () => {
  it("a full fine-tune's checkpoint serves with lwm infer --backend local and lwm generate (its base's tokenizer, the trained layout)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-train-full-'));
    try {
      const data = join(dir, 'data.jsonl');
      const gen = (await import('./gen.ts')).default;
      expect(await gen(['--domain', 'terminal', '--n', '6', '--seed', '2', '-o', data], captureIO())).toBe(0);
      const ft = join(dir, 'ft.safetensors');
      const r = await trainRun(
        '--stage',
        'sft',
        '--data',
        data,
        '--batch',
        '2',
        '--tokens',
        '64',
        '--eval-every',
        '1',
        '--from',
        FOLDER,
        '--steps',
        '1',
        '-o',
        ft,
      );
      expect(r.code, r.stderr).toBe(0);
      const records = toAgentWorldBenchRecords(generateTrajectories('terminal', 1, 4)[0]).slice(0, 2);
      await writeFile(join(dir, 'awb.jsonl'), records.map((x) => JSON.stringify(x)).join('\n') + '\n');
      const io = captureIO();
      expect(await infer([join(dir, 'awb.jsonl'), '--backend', 'local', '--model', ft, '--max-tokens', '4', '-o', '-'], io), io.stderr).toBe(0);
      const out = io.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(out).toHaveLength(2);
      for (const o of out) expect(o).toMatchObject({ gen: expect.any(String) });
      expect(out.every((o) => o.gen_error === undefined)).toBe(true);
      const g = captureIO();
      expect(await generate(['--model', ft, '--prompt', 'ls', '--max-tokens', '3', '--temperature', '0', '--json'], g), g.stderr).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--lora writes a PEFT adapter folder that resumes and exports merged or not', async () => {
    const { dir, data, out, r } = await firstLoraRun();
    expect(r.stderr).toMatch(/LoRA: rank 2, alpha 4 on q, v, down/);
    expect(r.code).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['adapter_config.json', 'adapter_model.optim.safetensors', 'adapter_model.safetensors', 'best']);
    const cfg = JSON.parse(await readFile(join(out, 'adapter_config.json'), 'utf8'));
    expect(cfg).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 2,
      lora_alpha: 4,
      target_modules: ['q_proj', 'v_proj', 'down_proj'],
      base_model_name_or_path: FOLDER,
    });
    const weights = readSafetensors(new Uint8Array(await readFile(join(out, 'adapter_model.safetensors'))));
    expect(weights.tensors.every((t) => /^base_model\.model\.model\.layers\.\d\.(self_attn\.[qv]|mlp\.down)_proj\.lora_[AB]\.weight$/.test(t.name))).toBe(true);
    expect(weights.metadata.step).toBe('2');

    // Resume: --from the adapter folder (its base from adapter_config.json) continues at step 2.
    const resumed = await trainRun(
      '--stage',
      'sft',
      '--data',
      data,
      '--batch',
      '2',
      '--tokens',
      '64',
      '--eval-every',
      '2',
      '--from',
      out,
      '--steps',
      '4',
      '-o',
      out,
    );
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toMatch(/\[sft 3\/4\]/);
    expect(resumed.stderr).not.toMatch(/\[sft 1\/4\]/);
    expect(readSafetensors(new Uint8Array(await readFile(join(out, 'adapter_model.safetensors')))).metadata.step).toBe('4');

    for (const unmerged of [false, true]) {
      const target = join(dir, unmerged ? 'peft' : 'merged');
      const io = captureIO();
      expect(await exportCommand([out, '--to', 'hf', '-o', target, ...(unmerged ? ['--unmerged'] : [])], io), io.stderr).toBe(0);
      const files = (await readdir(target)).sort();
      if (unmerged) {
        expect(files).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'lwm_template.json', 'tokenizer.json', 'tokenizer_config.json']);
        expect(Object.keys(readSafetensors(new Uint8Array(await readFile(join(target, 'adapter_model.safetensors')))).metadata)).toEqual(['format']);
      } else {
        expect(files).toEqual(['config.json', 'generation_config.json', 'lwm_template.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
        const model = readSafetensors(new Uint8Array(await readFile(join(target, 'model.safetensors'))));
        expect(model.tensors.map((t) => t.name)).toContain('model.layers.1.mlp.down_proj.weight');
        expect(JSON.parse(await readFile(join(target, 'config.json'), 'utf8')).architectures).toEqual(['LlamaForCausalLM']);
      }
      // The template the run trained with, as written (training wrapped it in the chat format).
      const t = JSON.parse(await readFile(join(target, 'lwm_template.json'), 'utf8'));
      expect(t.text).toBe(BUILTIN_TEMPLATES[t.version].text);
    }
  });

  it('--lora with --weights f16: the adapter trains on a base held in f16, step for step as on the f32 base within f16 rounding', async () => {
    // The f32 run is the first LoRA run above; the f16 run repeats it with the base in f16.
    const { dir, data, r: f32 } = await firstLoraRun();
    expect(f32.code, f32.stderr).toBe(0);
    const out = join(dir, 'adapter-f16');
    const f16 = await trainRun(...LORA, '--data', data, '--from', FOLDER, '--weights', 'f16', '-o', out);
    expect(f16.code, f16.stderr).toBe(0);
    expect(f32.stderr).toMatch(/base weights are frozen\n/);
    expect(f16.stderr).toMatch(/base weights are frozen \(held in f16 on the GPU\)/);
    expect((await readdir(out)).sort()).toContain('adapter_model.safetensors');
    const losses = { f32: trainLosses(f32.stderr), f16: trainLosses(f16.stderr) };
    console.log(`[train] LoRA losses, f32 base: ${losses.f32.join(', ')}; f16 base: ${losses.f16.join(', ')}`);
    expect(losses.f16.length).toBe(losses.f32.length);
    expect(losses.f16.length).toBe(2);
    losses.f16.forEach((l, i) => expect(Math.abs(l - losses.f32[i]) / losses.f32[i], `step ${i + 1}`).toBeLessThan(2e-2));
  });
});
