// The ONNX export run by onnxruntime-web (WASM, in Node) against our engine's reference model
// (src/reference/gpt.ts, the oracle the WGSL engine is held to) and against transformers' logits
// and greedy tokens recorded for the tiny Llama / Qwen2 / Qwen3 fixtures
// (scripts/fixtures/hf_tiny_models.py) and the micro GPT-2 checkpoints
// (scripts/fixtures/hf_export_check.py): the whole prompt in one pass, then the same prompt as a
// prefill and one-token steps through the KV cache.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gptLogits } from '../../reference/gpt.ts';
import { loadCheckpoint } from '../../core/model/checkpoint.ts';
import { presetConfig, type ModelConfig } from '../../core/model/config.ts';
import { loadTinyModel, TINY_ARCHS } from '../hf/tinyFixtures.ts';
import { initParams } from '../init.ts';
import { decoderModel } from './decoder.ts';
import { decodeModel, onnx } from './graph.ts';
import { OnnxDecoder, type KvCache } from './session.ts';

const EXPORT_DIR = new URL('../hf/fixtures/export/', import.meta.url).pathname;

/** Max |got − want| / max(|want|, 1). */
function relError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]) / Math.max(Math.abs(want[i]), 1));
  return worst;
}

/** Logits of every token of `ids`: prefill of the first `prefill` tokens, then one token at a time. */
async function stepwise(dec: OnnxDecoder, ids: number[], prefill: number): Promise<Float32Array> {
  let r = await dec.forward(ids.slice(0, prefill));
  const rows = [r.logits];
  let cache: KvCache = r.cache;
  for (let t = prefill; t < ids.length; t++) {
    r = await dec.forward([ids[t]], cache);
    cache = r.cache;
    rows.push(r.logits);
  }
  expect(cache.length).toBe(ids.length);
  const out = new Float32Array(rows.reduce((a, x) => a + x.length, 0));
  let at = 0;
  for (const x of rows) {
    out.set(x, at);
    at += x.length;
  }
  return out;
}

async function greedy(dec: OnnxDecoder, prompt: number[], n: number): Promise<number[]> {
  const out: number[] = [];
  for await (const id of dec.generate(prompt, { maxNewTokens: n, sampling: { temperature: 0 } })) out.push(id);
  return out;
}

describe('ONNX export of the tiny Hugging Face models in onnxruntime-web', () => {
  it.each(TINY_ARCHS)("%s: logits with and without the KV cache and greedy tokens equal transformers'", async (arch) => {
    const m = await loadTinyModel(arch);
    const { model } = decoderModel(m.hf.config, m.params);
    const dec = await OnnxDecoder.create(model, { label: arch });
    expect(dec.layout).toEqual({ layers: m.hf.config.layers, hasPositionIds: true, hasUseCacheBranch: false });
    const hf = m.logits.flat();
    const whole = (await dec.forward(m.inputIds)).logits;
    expect(relError(whole, hf)).toBeLessThan(1e-4);
    expect(relError(await stepwise(dec, m.inputIds, 3), hf)).toBeLessThan(1e-4);
    // Our engine's oracle on the same weights.
    expect(relError(whole, gptLogits(m.params, m.hf.config, m.inputIds))).toBeLessThan(1e-4);
    expect(await greedy(dec, m.inputIds, m.greedy.length)).toEqual(m.greedy);
    dec.dispose();
  });
});

describe('ONNX export of micro GPT-2 checkpoints', () => {
  const recorded = JSON.parse(readFileSync(`${EXPORT_DIR}expected.json`, 'utf8')) as Record<'tied' | 'untied', { ids: number[]; logits: number[][] }>;
  it.each(['untied', 'tied'] as const)("%s head: logits equal transformers' on the HF export and our reference, cached or not", async (name) => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(`${EXPORT_DIR}${name}.safetensors`)), { source: name });
    const { model } = decoderModel(ck.config, ck.params);
    const dec = await OnnxDecoder.create(model);
    const { ids, logits } = recorded[name];
    const hf = logits.flat();
    expect(relError((await dec.forward(ids)).logits, hf)).toBeLessThan(1e-4);
    expect(relError(await stepwise(dec, ids, 4), hf)).toBeLessThan(1e-4);
    const ref = gptLogits(ck.params, ck.config, ids);
    const V = ck.config.vocabSize;
    const refGreedy = [];
    const seq = [...ids];
    for (let i = 0; i < 5; i++) {
      const l = gptLogits(ck.params, ck.config, seq).subarray((seq.length - 1) * V);
      const id = l.indexOf(Math.max(...l));
      refGreedy.push(id);
      seq.push(id);
    }
    expect(relError((await dec.forward(ids)).logits, ref)).toBeLessThan(1e-4);
    expect(await greedy(dec, ids, 5)).toEqual(refGreedy);
    dec.dispose();
  });
});

describe('the decoder graph', () => {
  // LayerNorm with RoPE and GELU (our mini / small presets): neither GPT-2 nor Llama, exported exactly all the same.
  const config: ModelConfig = presetConfig('micro', { positions: 'rope', vocabSize: 40, dModel: 16, heads: 2 });
  const params = initParams(config, 3);

  it("declares Hugging Face's input and output names, types and dimensions, and standard opset-17 operators only", () => {
    const m = decodeModel(decoderModel(config, params).model);
    const graph = m.graph!;
    expect(m.opsetImport.map((o) => [o.domain, Number(o.version)])).toEqual([['', 17]]);
    expect(Number(m.irVersion)).toBe(8);
    type Value = NonNullable<typeof graph.input>[number];
    const dims = (v: Value) => v.type!.tensorType!.shape!.dim!.map((d) => d.dimParam || Number(d.dimValue));
    const io = (vs: Value[]) => Object.fromEntries(vs.map((v) => [v.name, [v.type!.tensorType!.elemType, ...dims(v)]]));
    const F = onnx.TensorProto.DataType.FLOAT;
    const I = onnx.TensorProto.DataType.INT64;
    const kv = (len: string) => [F, 'batch_size', 2, len, 8];
    expect(io(graph.input)).toEqual({
      input_ids: [I, 'batch_size', 'sequence_length'],
      attention_mask: [I, 'batch_size', 'total_sequence_length'],
      position_ids: [I, 'batch_size', 'sequence_length'],
      'past_key_values.0.key': kv('past_sequence_length'),
      'past_key_values.0.value': kv('past_sequence_length'),
      'past_key_values.1.key': kv('past_sequence_length'),
      'past_key_values.1.value': kv('past_sequence_length'),
    });
    expect(Object.keys(io(graph.output))).toEqual(['logits', 'present.0.key', 'present.0.value', 'present.1.key', 'present.1.value']);
    const ops = new Set(graph.node.map((n) => n.opType!));
    expect([...ops].filter((op) => !STANDARD.has(op))).toEqual([]);
    expect(graph.node.every((n) => !n.domain)).toBe(true);
    // The tied head is the embedding itself, stored once.
    expect(graph.initializer.filter((t) => t.dims!.map(Number).join() === '40,16')).toHaveLength(1);
  });

  it('matches our reference model for a LayerNorm + RoPE + GELU config, cached or not', async () => {
    const dec = await OnnxDecoder.create(decoderModel(config, params).model);
    const ids = [1, 7, 39, 0, 22, 5, 5, 12, 30];
    const ref = gptLogits(params, config, ids);
    expect(relError((await dec.forward(ids)).logits, ref)).toBeLessThan(1e-4);
    expect(relError(await stepwise(dec, ids, 1), ref)).toBeLessThan(1e-4);
    dec.dispose();
  });

  it('keeps the weights in an external-data file when asked (as for models over 2 GB), which onnxruntime-web reads', async () => {
    const { model, externalData } = decoderModel(config, params, { externalThreshold: 0 });
    expect(externalData).toBeDefined();
    const decoded = decodeModel(model);
    const outside = decoded.graph!.initializer.filter((t) => t.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL);
    expect(outside.length).toBeGreaterThan(0);
    expect(outside[0].externalData!.find((e) => e.key === 'location')!.value).toBe('model.onnx_data');
    const dec = await OnnxDecoder.create(model, { externalData: [{ path: 'model.onnx_data', data: externalData! }] });
    const ids = [3, 4, 5];
    expect(relError((await dec.forward(ids)).logits, gptLogits(params, config, ids))).toBeLessThan(1e-4);
    dec.dispose();
  });
});

const STANDARD = new Set([
  'Add',
  'And',
  'Cast',
  'Concat',
  'Cos',
  'Div',
  'Expand',
  'Gather',
  'Gemm',
  'LayerNormalization',
  'LessOrEqual',
  'MatMul',
  'Mul',
  'Neg',
  'Range',
  'ReduceMean',
  'Reshape',
  'Shape',
  'Sigmoid',
  'Sin',
  'Slice',
  'Softmax',
  'Sqrt',
  'Tanh',
  'Transpose',
  'Unsqueeze',
  'Where',
]);
