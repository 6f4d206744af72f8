import { describe, expect, it } from 'vitest';
import { embeddingBackwardRef, embeddingForwardRef, type EmbeddingShape } from '../../reference/embedding.ts';
import type { GpuRuntime } from '../runtime.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { submit } from './common.ts';
import { EmbeddingKernel } from './embedding.ts';

const align64 = (n: number) => Math.ceil(n / 64) * 64;

/** Tokens with heavy repetition: a few hot ids, the rest spread. */
function tokensFor(rows: number, vocab: number, seed: number): number[] {
  const r = randomArray(rows, seed);
  return Array.from(r, (v, i) => (i % 3 === 0 ? 0 : Math.floor(((v + 1) / 2) * Math.min(vocab, 9)) % vocab));
}

/** `offset`: setPositionOffset(offset), checked against the reference reading and writing wpe `offset` rows further on. */
async function check(rt: GpuRuntime, base: Omit<EmbeddingShape, 'wteOffset' | 'wpeOffset'>, seed: number, forceScalar = false, offset = 0) {
  const wteOffset = 64;
  const wpeOffset = align64(wteOffset + base.vocab * base.C);
  const shape: EmbeddingShape = { ...base, wteOffset, wpeOffset };
  const total = wpeOffset + (base.T + offset) * base.C + 7;
  const weights = randomArray(total, seed);
  const grads0 = randomArray(total, seed + 1);
  const tokens = tokensFor(base.rows, base.vocab, seed + 2);
  const dout = randomArray(base.rows * base.C, seed + 3);

  const k = await EmbeddingKernel.create(rt, shape, { forceScalar });
  if (offset) k.setPositionOffset(offset);
  const ref = { ...shape, wpeOffset: wpeOffset + offset * base.C };
  expect(k.vec4).toBe(base.C % 4 === 0 && !forceScalar);
  const tok = rt.storage('t.tokens', base.rows * 4);
  const csr = rt.storage('t.csr', k.csrBytes);
  k.writeBatch(tok, tokens, csr);
  const W = rt.storage('t.w', weights);
  const X = rt.storage('t.x', base.rows * base.C * 4);
  const D = rt.storage('t.dout', dout);
  const G = rt.storage('t.g', grads0);
  submit(rt, 'test', (pass) => {
    k.encodeForward(pass, tok, W, X);
    k.encodeBackward(pass, csr, D, G);
  });
  const what = JSON.stringify(base);
  expectClose(await rt.readF32(X), embeddingForwardRef(tokens, weights, ref), 0, 0, `x ${what}`);
  const got = await rt.readF32(G);
  expectClose(got, embeddingBackwardRef(tokens, dout, grads0.slice(), ref), 1e-5, 1e-5, `grads ${what}`);
  // Second run on the same inputs: bit-identical (accumulating again from the same start).
  rt.write(G, grads0);
  submit(rt, 'test', (pass) => k.encodeBackward(pass, csr, D, G));
  expect(Array.from(await rt.readF32(G))).toEqual(Array.from(got));
  rt.release(tok, csr, W, X, D, G);
  k.dispose();
}

describe('embedding kernels vs reference', () => {
  it('one token, one channel', async () => {
    const rt = await gpuRuntime();
    await check(rt, { rows: 1, C: 1, T: 1, vocab: 1, learnedPositions: true }, 1);
    await check(rt, { rows: 1, C: 1, T: 1, vocab: 1, learnedPositions: false }, 2);
  });

  it('learned positions, repeated tokens, C not a multiple of 64', async () => {
    const rt = await gpuRuntime();
    await check(rt, { rows: 12, C: 5, T: 4, vocab: 7, learnedPositions: true }, 3);
    await check(rt, { rows: 70, C: 130, T: 7, vocab: 300, learnedPositions: true }, 4);
  });

  it('without learned positions (RoPE models), vocab smaller than the batch', async () => {
    const rt = await gpuRuntime();
    await check(rt, { rows: 70, C: 66, T: 35, vocab: 5, learnedPositions: false }, 5);
  });

  it('vec4 forward (C a multiple of 4), and the scalar one on the same shape', async () => {
    const rt = await gpuRuntime();
    await check(rt, { rows: 1, C: 4, T: 1, vocab: 3, learnedPositions: true }, 11);
    await check(rt, { rows: 70, C: 64, T: 7, vocab: 300, learnedPositions: true }, 12);
    await check(rt, { rows: 33, C: 12, T: 11, vocab: 9, learnedPositions: false }, 13);
    await check(rt, { rows: 70, C: 64, T: 7, vocab: 300, learnedPositions: true }, 14, true);
  });

  it('a position offset (completions after a shared prompt) moves the wpe rows read and the dwpe rows written alike', async () => {
    const rt = await gpuRuntime();
    await check(rt, { rows: 12, C: 5, T: 4, vocab: 7, learnedPositions: true }, 15, false, 3);
    await check(rt, { rows: 12, C: 8, T: 4, vocab: 7, learnedPositions: true }, 16, false, 5);
  });

  it('spills large grids into y', async () => {
    const base = await gpuRuntime();
    // forward 10 workgroups, backward 20 + 8; vec4 forward 5 and backward 1 + 8 (limit 3)
    await check(withGridLimit(base, 6), { rows: 80, C: 30, T: 8, vocab: 20, learnedPositions: true }, 7);
    await check(withGridLimit(base, 3), { rows: 80, C: 64, T: 8, vocab: 1, learnedPositions: true }, 8);
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    await check(rt, { rows: 9, C: 3, T: 3, vocab: 4, learnedPositions: true }, 6);
    expect(rt.stats().live).toBe(before);
  });
});
