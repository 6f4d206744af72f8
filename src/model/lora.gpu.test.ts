// LoRA on the GPU: one adapted projection against the TypeScript twin (awkward shapes, a block of
// columns of a fused matrix), and the whole model against the chain rule through the merged
// model (W' = W + s·A·B): the adapted model's loss is the merged model's and its adapter
// gradients are dA = s·dW'·Bᵀ, dB = s·Aᵀ·dW' with dW' the merged model's full gradient.
// Training moves only the adapter; the frozen weights stay bit for bit.
import { describe, expect, it } from 'vitest';
import { randomArray } from '../core/random.ts';
import { submit } from '../gpu/kernels/common.ts';
import { expectClose } from '../gpu/testing/compare.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { loraLinearBackward, loraLinearForward } from '../reference/lora.ts';
import type { ModelConfig } from '../core/model/config.ts';
import type { ModelBatch } from './gpt.ts';
import { GpuTrainer } from './trainer.ts';
import { initLora, loraLayout, loraSettings, mergeLora, type LoraLayout, type LoraTarget } from './lora.ts';
import { GpuLora } from './loraGpu.ts';
import { loadTinyModel, TINY_ARCHS } from './hf/tinyFixtures.ts';
import { GpuGenerator } from './generate.ts';

// Grouped-query attention with odd widths: q 3·4 = 12, k and v 1·4 = 4, C = 10, F = 7.
const ODD: ModelConfig = {
  vocabSize: 19,
  contextLength: 16,
  layers: 1,
  heads: 3,
  dModel: 10,
  mlpRatio: 1,
  norm: 'rmsnorm',
  positions: 'rope',
  tiedEmbeddings: true,
  normEps: 1e-6,
  ropeBase: 10000,
  kvHeads: 1,
  headDim: 4,
  mlp: 'swiglu',
  mlpWidth: 7,
  qkvBias: false,
  projBias: false,
  mlpBias: false,
};

/** A nonzero adapter (B random too), so every gradient path carries signal. */
function randomAdapter(layout: LoraLayout, seed: number): Float32Array {
  return randomArray(layout.totalSize, seed).map((v) => 0.3 * v);
}

describe('LoRA projection on the GPU vs the twin', () => {
  it.each(['k', 'v', 'o', 'up', 'down'] as LoraTarget[])('%s at rank 3, 7 rows', async (target) => {
    const rt = await gpuRuntime();
    const layout = loraLayout(ODD, loraSettings(3, 5, [target]));
    const p = layout.pairs[0];
    const rows = 7;
    const lp = randomAdapter(layout, 1);
    const x = randomArray(rows * p.inDim, 2);
    const y0 = randomArray(rows * p.baseWidth, 3);
    const dy = randomArray(rows * p.baseWidth, 4);
    const dx0 = randomArray(rows * p.inDim, 5);
    const lora = await GpuLora.create(rt, layout, { rows, backward: true });
    const bufs = [lp, x, y0, dy, dx0, new Float32Array(layout.totalSize)].map((a, i) => rt.storage(`t.${i}`, a));
    const [LP, X, Y, DY, DX, LG] = bufs;
    try {
      submit(rt, 'test', (pass) => {
        lora.encodeForward(pass, LP, 0, p.site, X, Y);
        lora.encodeBackward(pass, LP, LG, 0, p.site, X, DY, DX);
      });
      const shape = { rows, inDim: p.inDim, outDim: p.outDim, rank: 3, scale: layout.scale };
      const A = lp.subarray(p.A.offset, p.A.offset + p.A.size);
      const B = lp.subarray(p.B.offset, p.B.offset + p.B.size);
      const zeroW = new Float64Array(p.inDim * p.outDim);
      const cols = (m: Float32Array) =>
        Float64Array.from({ length: rows * p.outDim }, (_, i) => m[Math.floor(i / p.outDim) * p.baseWidth + p.col + (i % p.outDim)]);
      const delta = loraLinearForward(x, zeroW, A, B, shape);
      const wantY = Float64Array.from(y0);
      delta.forEach((v, i) => (wantY[Math.floor(i / p.outDim) * p.baseWidth + p.col + (i % p.outDim)] += v));
      expectClose(await rt.readF32(Y), wantY, 1e-5, 1e-4, 'y');
      const g = loraLinearBackward(x, zeroW, A, B, cols(dy), shape);
      const lg = await rt.readF32(LG);
      expectClose(lg.subarray(p.A.offset, p.A.offset + p.A.size), g.dA, 1e-5, 1e-4, 'dA');
      expectClose(lg.subarray(p.B.offset, p.B.offset + p.B.size), g.dB, 1e-5, 1e-4, 'dB');
      expectClose(
        await rt.readF32(DX),
        g.dx.map((v, i) => v + dx0[i]),
        1e-5,
        1e-4,
        'dx',
      );
    } finally {
      rt.release(...bufs);
      lora.dispose();
    }
  });
});

/** dA = s·G·Bᵀ and dB = s·Aᵀ·G, G the merged model's gradient over the pair's columns of its weight. */
function chainRule(layout: LoraLayout, lora: Float32Array, full: Float32Array): Float32Array {
  const out = new Float32Array(layout.totalSize);
  const r = layout.settings.rank;
  for (const p of layout.pairs) {
    const G = (i: number, o: number) => full[p.base.offset + i * p.baseWidth + p.col + o];
    for (let i = 0; i < p.inDim; i++) {
      for (let k = 0; k < r; k++) {
        let acc = 0;
        for (let o = 0; o < p.outDim; o++) acc += G(i, o) * lora[p.B.offset + k * p.outDim + o];
        out[p.A.offset + i * r + k] = layout.scale * acc;
      }
    }
    for (let k = 0; k < r; k++) {
      for (let o = 0; o < p.outDim; o++) {
        let acc = 0;
        for (let i = 0; i < p.inDim; i++) acc += lora[p.A.offset + i * r + k] * G(i, o);
        out[p.B.offset + k * p.outDim + o] = layout.scale * acc;
      }
    }
  }
  return out;
}

function batchOf(vocab: number, B: number, T: number, seed: number): ModelBatch {
  const ids = randomArray(B * (T + 1), seed).map((v) => Math.floor(((v + 1) / 2) * vocab) % vocab);
  const inputs = new Uint32Array(B * T);
  const targets = new Uint32Array(B * T);
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++) {
      inputs[b * T + t] = ids[b * (T + 1) + t];
      targets[b * T + t] = ids[b * (T + 1) + t + 1];
    }
  return { B, T, inputs, targets };
}

describe('LoRA in the model', () => {
  // Qwen2 adds q/k/v biases, Qwen3 the per-head q/k norms (whose gains get no gradient when frozen).
  it.each(TINY_ARCHS)('tiny %s: loss equals the merged model and adapter gradients follow the chain rule', async (arch) => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel(arch);
    const layout = loraLayout(m.hf.config, loraSettings(4));
    const lora = randomAdapter(layout, 7);
    const batch = batchOf(m.hf.config.vocabSize, 2, 12, 3);
    const full = await GpuTrainer.create(rt, m.hf.config, { batch: 2, T: 12 });
    const adapted = await GpuTrainer.create(rt, m.hf.config, { batch: 2, T: 12, lora: layout });
    try {
      full.setParams(mergeLora(m.params, layout, lora));
      adapted.setParams(m.params);
      adapted.model.setLora(lora);
      const want = await full.lossAndGradient(batch);
      const got = await adapted.lossAndGradient(batch);
      expect(Math.abs(got.loss - want.loss)).toBeLessThan(1e-5);
      expect(got.grad.length).toBe(layout.totalSize);
      expectClose(got.grad, chainRule(layout, lora, want.grad), 2e-6, 2e-3, 'adapter gradient');
      // Memory: the frozen weights have no gradient or Adam state.
      expect(adapted.bytes()).toBeLessThan(full.bytes());
    } finally {
      full.dispose();
      adapted.dispose();
    }
  });

  it('training moves the adapter only; the frozen weights stay bit for bit', async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('llama');
    const layout = loraLayout(m.hf.config, loraSettings(2, 4, ['q', 'v', 'down']));
    const init = initLora(layout, 1);
    const trainer = await GpuTrainer.create(rt, m.hf.config, { batch: 2, T: 12, lora: layout });
    try {
      trainer.setParams(m.params);
      trainer.model.setLora(init);
      const batch = batchOf(m.hf.config.vocabSize, 2, 12, 9);
      const before = await trainer.model.evalLoss(batch);
      let last = before;
      for (let s = 0; s < 8; s++) last = (await trainer.trainStep(batch, 1e-2)).loss!;
      expect(await trainer.model.evalLoss(batch)).toBeLessThan(before);
      expect(last).toBeLessThan(before);
      expect(Array.from(await trainer.model.getParams())).toEqual(Array.from(m.params));
      const after = await trainer.model.getLora();
      expect(after.some((v, i) => v !== init[i])).toBe(true);
    } finally {
      trainer.dispose();
    }
  });

  it('generation with the adapter equals generation on the merged weights (prefill and decode, a group)', async () => {
    const rt = await gpuRuntime();
    const m = await loadTinyModel('llama');
    const layout = loraLayout(m.hf.config, loraSettings(3, 9, ['k', 'o', 'gate', 'down']));
    const lora = randomAdapter(layout, 5);
    const base = rt.storage('t.base', m.params);
    const adapter = rt.storage('t.lora', lora);
    const merged = rt.storage('t.merged', mergeLora(m.params, layout, lora));
    const withLora = new GpuGenerator(rt, m.hf.config, base, { maxSequences: 3, maxLength: 32, lora: { layout, params: adapter } });
    const plain = new GpuGenerator(rt, m.hf.config, merged, { maxSequences: 3, maxLength: 32 });
    const without = new GpuGenerator(rt, m.hf.config, base, { maxSequences: 3, maxLength: 32 });
    try {
      const prompt = [1, 5, 9, 33, 2, 17, 40];
      const sampling = { temperature: 1, seed: 4 };
      const a = await withLora.generateGroup(prompt, 3, { maxNewTokens: 10, sampling });
      expect(a).toEqual(await plain.generateGroup(prompt, 3, { maxNewTokens: 10, sampling }));
      expect(a).not.toEqual(await without.generateGroup(prompt, 3, { maxNewTokens: 10, sampling }));
    } finally {
      for (const g of [withLora, plain, without]) g.dispose();
      rt.release(base, adapter, merged);
    }
  });
});
