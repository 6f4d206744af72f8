import { describe, expect, it } from 'vitest';
import { randomArray } from '../core/random.ts';
import { loraLinearBackward, loraLinearForward, type LoraLinearShape } from './lora.ts';

describe('LoRA projection twin', () => {
  // Odd sizes, rank 1 and a rank above the input width.
  const shapes: LoraLinearShape[] = [
    { rows: 3, inDim: 5, outDim: 7, rank: 2, scale: 2 },
    { rows: 1, inDim: 4, outDim: 3, rank: 1, scale: 0.5 },
    { rows: 5, inDim: 3, outDim: 6, rank: 4, scale: 16 / 4 },
  ];
  it.each(shapes)('backward equals finite differences %o', (s) => {
    const x = randomArray(s.rows * s.inDim, 1);
    const W = randomArray(s.inDim * s.outDim, 2);
    const A = Float64Array.from(randomArray(s.inDim * s.rank, 3));
    const B = Float64Array.from(randomArray(s.rank * s.outDim, 4));
    const dy = randomArray(s.rows * s.outDim, 5);
    const xs = Float64Array.from(x);
    const loss = () => loraLinearForward(xs, W, A, B, s).reduce((acc, v, i) => acc + v * dy[i], 0);
    const g = loraLinearBackward(xs, W, A, B, dy, s);
    const h = 1e-6;
    for (const [name, arr, grad] of [
      ['x', xs, g.dx],
      ['A', A, g.dA],
      ['B', B, g.dB],
    ] as const) {
      for (let i = 0; i < arr.length; i++) {
        const keep = arr[i];
        arr[i] = keep + h;
        const up = loss();
        arr[i] = keep - h;
        const down = loss();
        arr[i] = keep;
        expect(Math.abs((up - down) / (2 * h) - grad[i]), `${name}[${i}]`).toBeLessThan(1e-7);
      }
    }
  });

  it('with B = 0 (the initial adapter) the output is the base projection and A gets no gradient', () => {
    const s: LoraLinearShape = { rows: 2, inDim: 3, outDim: 4, rank: 2, scale: 2 };
    const x = randomArray(6, 1);
    const W = randomArray(12, 2);
    const A = randomArray(6, 3);
    const B = new Float64Array(8);
    const y = loraLinearForward(x, W, A, B, { ...s, scale: 0 });
    expect(Array.from(loraLinearForward(x, W, A, B, s))).toEqual(Array.from(y));
    const g = loraLinearBackward(x, W, A, B, randomArray(8, 4), s);
    expect(g.dA.every((v) => v === 0)).toBe(true);
    expect(g.dB.some((v) => v !== 0)).toBe(true);
  });
});
