// The kernel bench's napkin maths (bench/napkin.ts) against the formulas in the shader headers:
// each `napkin(<kernel>): flops = …; bytes = …` line is evaluated at several shapes and must give
// what the TypeScript function gives, so the header a reader trusts and the numbers the bench
// prints cannot drift apart.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { addNapkin, attentionForwardNapkin, matmulNapkin, NAPKINS, prefixAttentionForwardNapkin, throughput, type Napkin } from '../../bench/napkin.ts';

const shaderDir = new URL('../../shaders/', import.meta.url);

/** The header's formulas for `name`, as functions of a shape object. */
function headerFormulas(shader: string, name: string): { flops: (s: Record<string, number>) => number; bytes: (s: Record<string, number>) => number } {
  const text = readFileSync(new URL(shader, shaderDir), 'utf8');
  const lines = text.split('\n').filter((l) => l.startsWith(`// napkin(${name}):`));
  expect(lines, `${shader} has one napkin(${name}) line`).toHaveLength(1);
  const m = /^\/\/ napkin\([\w]+\): flops = ([^;]+); bytes = (.+)$/.exec(lines[0]);
  expect(m, `napkin(${name}) line is "flops = …; bytes = …"`).not.toBeNull();
  const compile = (expr: string) => {
    // Only shape names, numbers and arithmetic: nothing else is evaluated.
    expect(expr).toMatch(/^[\w\s+\-*/().]+$/);
    return (s: Record<string, number>) => Function(...Object.keys(s), `return (${expr});`)(...Object.values(s)) as number;
  };
  return { flops: compile(m![1]), bytes: compile(m![2]) };
}

// Shapes for every dimension name the formulas use: the bench model, an awkward one, a large one.
const SHAPES: Record<string, number>[] = [
  { M: 512, N: 192, K: 64, batch: 1, B: 8, T: 64, H: 4, D: 16, C: 64, rows: 512, V: 256, n: 131072, KVH: 2, F: 256, G: 4, Tc: 32, P: 96 },
  { M: 7, N: 13, K: 5, batch: 3, B: 3, T: 5, H: 3, D: 4, C: 12, rows: 7, V: 1000, n: 4099, KVH: 1, F: 11, G: 3, Tc: 5, P: 0 },
  { M: 512, N: 512, K: 512, batch: 2, B: 4, T: 256, H: 4, D: 32, C: 128, rows: 4096, V: 2048, n: 1 << 21, KVH: 4, F: 1536, G: 8, Tc: 128, P: 1000 },
];

describe('kernel napkin maths', () => {
  for (const entry of NAPKINS) {
    it(`${entry.name} matches the formulas in shaders/${entry.shader}`, () => {
      const header = headerFormulas(entry.shader, entry.name);
      for (const s of SHAPES) {
        const got: Napkin = entry.count(s);
        expect(got.flops).toBe(header.flops(s));
        expect(got.bytes).toBe(header.bytes(s));
        expect(got.flops).toBeGreaterThan(0);
        expect(got.bytes).toBeGreaterThan(0);
      }
    });
  }

  it('counts the textbook cases', () => {
    // 2·n³ FLOPs and three n² matrices for a square product.
    expect(matmulNapkin.count({ M: 4, N: 4, K: 4, batch: 1 })).toEqual({ flops: 128, bytes: 192 });
    // T = 1 is one (query, key) pair: q·k and p·v, 2·D FLOPs each.
    expect(attentionForwardNapkin.count({ B: 1, T: 1, H: 1, D: 8, C: 8 }).flops).toBe(32);
    expect(addNapkin.count({ n: 10 })).toEqual({ flops: 10, bytes: 120 });
    // No prefix and one completion is plain causal attention over its own rows.
    expect(prefixAttentionForwardNapkin.count({ G: 1, Tc: 9, P: 0, H: 3, KVH: 3, D: 8 }).flops).toBe(
      attentionForwardNapkin.count({ B: 1, T: 9, H: 3, D: 8, C: 24 }).flops,
    );
  });

  it('reports the share of the ceiling its bound names', () => {
    const n = { flops: 2e9, bytes: 1e9 };
    const ceiling = { gflops: 4, gbps: 10 };
    // 1 s per call: 2 GFLOP/s, 1 GB/s.
    expect(throughput(n, 1000, 'compute', ceiling)).toEqual({ gflops: 2, gbps: 1, share: 0.5 });
    expect(throughput(n, 1000, 'memory', ceiling).share).toBeCloseTo(0.1);
  });
});
