import { describe, expect, it } from 'vitest';
import { embeddingBackwardRef, embeddingForwardF16Ref, embeddingForwardRef, type EmbeddingShape } from '../../reference/embedding.ts';
import { packedWords, packF16Rows } from '../../reference/f16.ts';
import type { GpuRuntime } from '../runtime.ts';
import { withScope } from '../testing/checkOp.ts';
import { expectClose, randomArray } from '../testing/compare.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
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

  await withScope(rt, async (g) => {
    const k = await g.kernel(EmbeddingKernel.create(rt, shape, { forceScalar }));
    if (offset) k.setPositionOffset(offset);
    const ref = { ...shape, wpeOffset: wpeOffset + offset * base.C };
    expect(k.vec4).toBe(base.C % 4 === 0 && !forceScalar);
    const tok = g.buffer('t.tokens', base.rows * 4);
    const csr = g.buffer('t.csr', k.csrBytes);
    k.writeBatch(tok, tokens, csr);
    const W = g.buffer('t.w', weights);
    const X = g.buffer('t.x', base.rows * base.C * 4);
    const D = g.buffer('t.dout', dout);
    const G = g.buffer('t.g', grads0);
    g.submit((pass) => {
      k.encodeForward(pass, tok, W, X);
      k.encodeBackward(pass, csr, D, G);
    });
    const what = JSON.stringify(base);
    expectClose(await g.read(X), embeddingForwardRef(tokens, weights, ref), 0, 0, `x ${what}`);
    const got = await g.read(G);
    expectClose(got, embeddingBackwardRef(tokens, dout, grads0.slice(), ref), 1e-5, 1e-5, `grads ${what}`);
    // Second run on the same inputs: bit-identical (accumulating again from the same start).
    rt.write(G, grads0);
    g.submit((pass) => k.encodeBackward(pass, csr, D, G));
    expect(Array.from(await g.read(G))).toEqual(Array.from(got));
  });
}

/** The table [vocab, C] cut at `cuts` (row boundaries), each piece at an awkward offset of its own buffer; wpe in a third. */
async function checkPieces(rt: GpuRuntime, base: Omit<EmbeddingShape, 'wteOffset' | 'wpeOffset'>, cuts: number[], seed: number) {
  const { rows, C, T, vocab } = base;
  const wte = randomArray(vocab * C, seed);
  const wpe = randomArray(T * C + 64, seed + 1);
  const tokens = Array.from(randomArray(rows, seed + 2), (v, i) => (i % 4 === 0 ? cuts[1] - 1 : Math.floor(((v + 1) / 2) * vocab) % vocab));
  const dout = randomArray(rows * C, seed + 3);
  const whole = { ...base, wteOffset: 0, wpeOffset: 64 };
  await withScope(rt, async (g) => {
    const P = g.buffer('t.wpe', wpe);
    const dP = g.buffer('t.dwpe', wpe.length * 4);
    const tok = g.buffer('t.tokens', rows * 4);
    const X = g.buffer('t.x', rows * C * 4);
    const D = g.buffer('t.dout', dout);
    const pieces: { k: EmbeddingKernel; at: number; lo: number; hi: number; W: GPUBuffer; G: GPUBuffer }[] = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const [lo, hi] = [cuts[i], cuts[i + 1]];
      const at = 64 * (i + 1);
      const data = new Float32Array(at + (hi - lo) * C);
      data.set(wte.subarray(lo * C, hi * C), at);
      const k = await g.kernel(EmbeddingKernel.create(rt, { ...whole, wteOffset: at, tokenStart: lo, tokenEnd: hi }));
      pieces.push({ k, at, lo, hi, W: g.buffer('t.w', data), G: g.buffer('t.g', data.length * 4) });
    }
    const csr = g.buffer('t.csr', pieces[0].k.csrBytes);
    pieces[0].k.writeBatch(tok, tokens, csr);
    g.submit((pass) => {
      for (const p of pieces) p.k.encodeForward(pass, tok, p.W, X, P);
      pieces.forEach((p, i) => p.k.encodeBackward(pass, csr, D, p.G, i === 0 ? dP : false));
    });
    const what = `${JSON.stringify(base)} cut at ${cuts.join(', ')}`;
    expectClose(await g.read(X), embeddingForwardRef(tokens, wte, whole, undefined, wpe), 0, 0, `x ${what}`);
    const want = new Float32Array(vocab * C);
    const wantPos = new Float32Array(wpe.length);
    embeddingBackwardRef(tokens, dout, want, whole, wantPos);
    const got = new Float32Array(vocab * C);
    for (const p of pieces) got.set((await g.read(p.G)).subarray(p.at), p.lo * C);
    expectClose(got, want, 1e-5, 1e-5, `dwte ${what}`);
    expectClose(await g.read(dP), base.learnedPositions ? wantPos : new Float32Array(wpe.length), 1e-5, 1e-5, `dwpe ${what}`);
  });
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

  it('a table split by rows into pieces in buffers of their own gives the unsplit lookup and gradient (positions in another buffer)', async () => {
    const rt = await gpuRuntime();
    await checkPieces(rt, { rows: 37, C: 5, T: 37, vocab: 23, learnedPositions: true }, [0, 7, 8, 20, 23], 41);
    await checkPieces(rt, { rows: 70, C: 12, T: 7, vocab: 300, learnedPositions: true }, [0, 150, 299, 300], 42);
    await checkPieces(rt, { rows: 16, C: 8, T: 16, vocab: 9, learnedPositions: false }, [0, 1, 5, 9], 43);
  });

  it('leaves no buffers behind', async () => {
    const rt = await gpuRuntime();
    const before = rt.stats().live;
    await check(rt, { rows: 9, C: 3, T: 3, vocab: 4, learnedPositions: true }, 6);
    expect(rt.stats().live).toBe(before);
  });
});

describe('embedding from an f16 token table (packed rows)', () => {
  /** `cuts`: the table split by rows, each piece packed at an awkward word offset of its own buffer; wpe (f32) in another. */
  async function checkF16(base: Omit<EmbeddingShape, 'wteOffset' | 'wpeOffset'>, cuts: number[], seed: number) {
    const rt = await gpuRuntime();
    const { rows, C, T, vocab } = base;
    const wte = randomArray(vocab * C, seed);
    const wpe = randomArray(T * C + 64, seed + 1);
    const tokens = tokensFor(rows, vocab, seed + 2);
    const bounds = [0, ...cuts, vocab];
    await withScope(rt, async (g) => {
      const X = g.buffer('t.x', rows * C * 4);
      const P = g.buffer('t.wpe', wpe);
      const T0 = g.buffer('t.tokens', rows * 4);
      const want = embeddingForwardRef(tokens, wte, { ...base, wteOffset: 0, wpeOffset: 64 }, undefined, wpe);
      const made: { k: EmbeddingKernel; W: GPUBuffer; words: Uint32Array; shape: EmbeddingShape }[] = [];
      for (let i = 0; i + 1 < bounds.length; i++) {
        const [lo, hi] = [bounds[i], bounds[i + 1]];
        const wteOffset = 3 + i;
        const words = new Uint32Array(wteOffset + packedWords(hi - lo, C)).fill(0x63d063d0);
        packF16Rows(wte, hi - lo, C, lo * C, words, wteOffset);
        const shape = { ...base, wteOffset, wpeOffset: 64, tokenStart: lo, tokenEnd: hi };
        const k = await g.kernel(EmbeddingKernel.create(rt, shape, { f16: true }));
        made.push({ k, W: g.buffer('t.wte', words), words, shape });
      }
      made[0].k.writeBatch(T0, tokens);
      g.submit((pass) => made.forEach(({ k, W }) => k.encodeForward(pass, T0, W, X, P)));
      const got = await g.read(X);
      // Each piece's rows as its twin writes them, the others left alone.
      const twin = new Float32Array(rows * C);
      for (const { words, shape } of made) {
        const part = embeddingForwardF16Ref(tokens, words, shape, wpe);
        tokens.forEach((t, r) => t >= shape.tokenStart! && t < shape.tokenEnd! && twin.set(part.subarray(r * C, (r + 1) * C), r * C));
      }
      expectClose(got, twin, 0, 0, `x ${JSON.stringify(base)}`);
      // And within f16 rounding of the f32 table.
      expectClose(got, want, 1e-3, 1e-3, 'x against the f32 table');
      expect(() => made[0].k.encodeBackward({} as GPUComputePassEncoder, T0, X, X)).toThrow(/f16 weights is for inference/);
    });
  }

  it('odd width (a padded half per row), learned positions, one piece and three', async () => {
    await checkF16({ rows: 13, C: 7, T: 5, vocab: 11, learnedPositions: true }, [], 71);
    await checkF16({ rows: 13, C: 7, T: 5, vocab: 11, learnedPositions: false }, [3, 8], 72);
    await checkF16({ rows: 40, C: 64, T: 40, vocab: 50, learnedPositions: false }, [17], 73);
  });
});
