// A fine-tune of a pretrained Hugging Face model (the tiny chat Llama) is served in the layout it
// was trained on: for the same turn sample, the prompt ids the checkpoint backend, the Hugging Face
// backend (on `lwm export --to hf`) and the ONNX backend (on `lwm export --to onnx`) give the model
// EQUAL the context ids the SFT pipeline trained on, up to and including the opening tag. A plain
// instruct folder (no lwm_template.json) keeps the AgentWorldBench chat layout, and a broken
// lwm_template.json is refused naming the file. No GPU: the checkpoint is written with the base's
// weights as the pipeline writes one, and the ONNX model runs in onnxruntime's WASM.
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import exportCommand from './export.ts';
import { captureIO } from '../testing.ts';
import type { TurnRequest } from '../../core/backend.ts';
import { awbMessages } from '../../core/bench/awbLayout.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { expandTurns } from '../../core/turns/index.ts';
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint.ts';
import { readHfBase } from '../../model/hf/base.ts';
import { loadHfModel } from '../../model/hf/load.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { saveLoraCheckpoint } from '../../model/hf/adapter.ts';
import { initLora, loraLayout, loraSettings } from '../../model/lora.ts';
import { loraAdapterConfig, writeLoraFolder } from './trainHf.ts';
import { loadOnnxModel, type LoadedOnnxModel } from '../../model/onnx/load.ts';
import { templateFromJson } from '../../model/templateFile.ts';
import { hfCheckpointMetadata, prepare, resolveSpec, stageRows, wrapRunTemplates, type TrainSpec } from '../../train/pipeline.ts';
import { checkpointTrainedChat, trainedTemplates } from '../../backends/checkpoint.ts';
import { hfPrompt, hfServedPrompt } from '../../backends/hf.ts';
import { onnxBackend, onnxPromptIdsIn } from '../../backends/onnx.ts';
import { decodeStream } from '../../backends/stream.ts';
import { stopAtClose } from '../../backends/trainedChat.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const LIMITS = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30, shaderF16: false };
// The run's own template (not a built-in one: it must travel in the checkpoint and the exports).
const MINE = { ...BUILTIN_TEMPLATES.compact, version: 'mine', description: 'a run of its own' };

let dir: string;
let ckPath: string;
let trainedIds: number[];
let request: TurnRequest;
let room: number;

async function run(argv: string[]): Promise<void> {
  const io = captureIO();
  expect(await exportCommand(argv, io), io.stderr).toBe(0);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lwm-trained-chat-'));
  const { base, params } = await readHfBase(await nodeFolder(FOLDER), { limits: LIMITS }, 'llama-chat');
  const trajectories = generateTrajectories('terminal', 2, 3);
  const spec = resolveSpec({
    kind: 'train',
    stage: 'sft',
    preset: 'micro',
    steps: 1,
    templates: { mine: 1 },
    templateSet: { mine: MINE },
    evalFraction: 0,
  } as TrainSpec);
  // The pipeline's own steps: prepare from the folder, wrap the templates, encode the SFT rows.
  const p = prepare(spec, trajectories, undefined, { base, params });
  wrapRunTemplates(spec, p);
  const samples = expandTurns(trajectories);
  const rows = stageRows('sft', p, trajectories, spec.templates, spec.seed, false, spec.templateSet);
  // A later turn (with history). The tiny model's 128 tokens cut every sample: the training
  // policy fitted its context into the row's context budget; the served prompt is fitted into the
  // room a generation of `context − room` tokens leaves, so with room = budget + opening tag the
  // served model must get exactly what training gave it.
  const i = samples.findIndex((x) => x.history.length >= 2);
  const row = rows[i];
  const open = p.tok.encode(spec.templateSet.mine.targetOpen);
  expect(row.ids.slice(row.promptLength, row.promptLength + open.length)).toEqual(open);
  expect(row.droppedTurns + (row.truncated ? 1 : 0)).toBeGreaterThan(0);
  trainedIds = row.ids.slice(0, row.promptLength + open.length);
  const s = samples[i];
  request = { sample: { domain: s.domain, systemPrompt: s.systemPrompt, history: s.history, action: s.action } };
  room = row.contextBudget! + open.length;
  expect(room).toBeLessThan(p.config.contextLength);
  // The full fine-tune's checkpoint, with the metadata the pipeline writes (the base's weights stand in for tuned ones).
  ckPath = join(dir, 'ft.safetensors');
  await writeFile(
    ckPath,
    saveCheckpoint({ config: p.config, params, step: 1, extraMetadata: hfCheckpointMetadata(p as typeof p & { hf: NonNullable<typeof p.hf> }, spec) }),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a fine-tune of a Hugging Face model is served as it was trained', () => {
  it("the checkpoint backend: the trained template, wrapped in the base's chat format, gives the SFT context ids", () => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(ckPath)), { source: ckPath });
    const { templates, trained } = trainedTemplates(ck);
    expect(trained).toBe('mine');
    expect(templates.mine.text).toBe(MINE.text);
    const hf = checkpointTrainedChat(ck, templates[trained], ckPath)!;
    const p = hf.trained.prompt(request, room);
    expect(p.fitted.ids).toEqual(trainedIds);
    expect(p.close).toBe('</predicted_observation>');
    // The context bar counts the same prompt.
    const report = hf.trained.contextReport(request, room + 8, 8);
    expect(report.prompt).toBe(trainedIds.length);
    expect(report.truncated).toBe(true);
  });

  it('--to hf: lwm_template.json holds the unwrapped template; the Hugging Face backend gives the SFT context ids', async () => {
    const out = join(dir, 'hf');
    await run([ckPath, '--to', 'hf', '-o', out]);
    expect(templateFromJson(JSON.parse(await readFile(join(out, 'lwm_template.json'), 'utf8')), 'x')).toEqual({ ...MINE });
    const m = await loadHfModel(await nodeFolder(out), { limits: LIMITS });
    expect(m.hasChatTemplate).toBe(true);
    expect(m.template?.version).toBe('mine');
    const served = hfServedPrompt(m, request, room);
    expect(served.ids).toEqual(trainedIds);
    expect(served.close).toBe('</predicted_observation>');
    // Not the AgentWorldBench layout a plain instruct model gets.
    expect(served.ids).not.toEqual(hfPrompt(m.tokenizer, request, room).ids);
  });

  it('--to onnx: the ONNX backend gives the SFT context ids, and its text is what the decoder generates from them', async () => {
    const out = join(dir, 'onnx');
    await run([ckPath, '--to', 'onnx', '-o', out]);
    const m = await loadOnnxModel(await nodeFolder(out), { executionProvider: 'wasm' });
    try {
      expect(m.hasChatTemplate).toBe(true);
      expect(m.template?.version).toBe('mine');
      expect(onnxPromptIdsIn(m, request, room)).toEqual(trainedIds);
      await expectServedFrom(m, trainedIds, m.contextLength! - room);
    } finally {
      m.decoder.dispose();
    }
  });

  it("a LoRA run's adapter folder: merged, unmerged and ONNX exports keep the trained template; the merged folder gives the SFT context ids", async () => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(ckPath)), { source: ckPath });
    const settings = loraSettings(2);
    const bytes = saveLoraCheckpoint({
      config: ck.config,
      settings,
      baseModel: FOLDER,
      lora: initLora(loraLayout(ck.config, settings), 1),
      step: 1,
      extraMetadata: ck.extraMetadata,
    });
    const adapter = join(dir, 'adapter');
    writeLoraFolder(adapter, bytes, loraAdapterConfig(bytes)!);
    for (const [to, extra] of [
      ['hf', []],
      ['hf', ['--unmerged']],
      ['onnx', []],
    ] as const) {
      const out = join(dir, `adapter-${to}${extra.length ? '-unmerged' : ''}`);
      await run([adapter, '--to', to, '-o', out, ...extra]);
      expect(templateFromJson(JSON.parse(await readFile(join(out, 'lwm_template.json'), 'utf8')), out).version).toBe('mine');
    }
    const m = await loadHfModel(await nodeFolder(join(dir, 'adapter-hf')), { limits: LIMITS });
    expect(hfServedPrompt(m, request, room).ids).toEqual(trainedIds);
  });

  it("the served text stops before the observation's closing tag (a few tokens of the base's tokenizer) and at the end of turn", async () => {
    const m = await loadHfModel(await nodeFolder(join(dir, 'hf')), { limits: LIMITS });
    const tok = m.tokenizer!;
    const { close } = hfServedPrompt(m, request, room);
    const ids = [...tok.encode('drwx notes\n</predicted_observation>', { addSpecialTokens: false }), m.stopIds[0], 7, 8];
    expect(tok.encode('</predicted_observation>', { addSpecialTokens: false }).length).toBeGreaterThan(1);
    async function* stream() {
      yield* ids;
    }
    let text = '';
    for await (const piece of decodeStream(stream(), (x) => tok.decode(x), new Set(m.stopIds), stopAtClose({ maxTokens: 99, temperature: 0 }, close!)))
      text += piece;
    expect(text).toBe('drwx notes\n');
  });

  it('a plain instruct folder (no lwm_template.json) keeps the AgentWorldBench chat layout, on both backends', async () => {
    const m = await loadHfModel(await nodeFolder(FOLDER), { limits: LIMITS });
    expect(m.template).toBeUndefined();
    const turn: TurnRequest = { ...request, awb: { system: 'You simulate a Linux terminal.', actions: ['ls', 'pwd'], observations: ['notes.txt'] } };
    const awb = m.tokenizer!.encodeChat(awbMessages(turn), { addGenerationPrompt: true });
    expect(hfServedPrompt(m, turn, room)).toEqual({ ids: awb });
    const out = join(dir, 'plain-onnx');
    await run([FOLDER, '--to', 'onnx', '-o', out]);
    const o = await loadOnnxModel(await nodeFolder(out), { executionProvider: 'wasm' });
    try {
      expect(o.template).toBeUndefined();
      expect(onnxPromptIdsIn(o, turn, room)).toEqual(awb);
    } finally {
      o.decoder.dispose();
    }
  });

  it('a broken lwm_template.json in a Hugging Face folder is refused, naming the file', async () => {
    const out = join(dir, 'broken');
    await cp(FOLDER, out, { recursive: true });
    await writeFile(join(out, 'lwm_template.json'), JSON.stringify({ version: 'x', text: 'no history here', targetOpen: '<o>', targetClose: '</o>' }));
    await expect(loadHfModel(await nodeFolder(out), { limits: LIMITS })).rejects.toThrow(/broken\/lwm_template\.json: .*history/);
    await writeFile(join(out, 'lwm_template.json'), '{ not json');
    await expect(loadHfModel(await nodeFolder(out), { limits: LIMITS })).rejects.toThrow(/broken\/lwm_template\.json: is not valid JSON/);
  });
});

/** The backend's text is the decoder's greedy continuation of `ids`, decoded, cut before the observation's closing tag. */
async function expectServedFrom(m: LoadedOnnxModel, ids: number[], maxTokens: number): Promise<void> {
  const tok = m.tokenizer!;
  const greedy: number[] = [];
  for await (const id of m.decoder.generate(ids, { maxNewTokens: maxTokens, sampling: { temperature: 0 }, stop: m.stopIds })) greedy.push(id);
  const want = tok.decode(greedy.filter((id) => !m.stopIds.includes(id))).split('</predicted_observation>')[0];
  let text = '';
  for await (const piece of onnxBackend(m).generate(request, { maxTokens, temperature: 0 })) text += piece;
  expect(text).toBe(want);
}
