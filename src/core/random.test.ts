// The seeded streams are pinned: the default dataset, the split and the initial weights the GPU
// parity tests compare are made from them. These values were printed by the four modules this
// one replaced (turns/rng, envs/rng, gpu/numeric, model/init); a changed constant fails here
// before it silently changes the shipped dataset.
import { describe, expect, it } from 'vitest';
import { GaussianRng, Rng, hash128, hashString, keyedUniform, randomArray, seededRandom } from './random.ts';

describe('core/random', () => {
  it('mulberry32 and the [-1, 1) arrays drawn from it', () => {
    const r = seededRandom(5);
    expect([r(), r(), r()]).toEqual([0.6897749109193683, 0.7727432732935995, 0.21976301027461886]);
    expect(Array.from(randomArray(3, 42))).toEqual([0.2022075057029724, -0.10341887921094894, 0.7049316167831421]);
    const s = seededRandom(42);
    expect(Array.from(randomArray(50, 42))).toEqual(Array.from(new Float32Array(Array.from({ length: 50 }, () => s() * 2 - 1))));
  });

  it('FNV-1a + fmix32 string hash and the keyed draw', () => {
    expect([hashString('abc'), hashString('abc', 9)]).toEqual([482950588, 485217217]);
    expect(keyedUniform('x/y', 3)).toBe(0.9684291577432305);
  });

  it('cyrb128 seeds sfc32', () => {
    expect(hash128('seed')).toEqual([1759194642, 3740327626, 1460092294, 309006236]);
    const g = new Rng('seed');
    expect([g.next(), g.next()]).toEqual([0.37434926675632596, 0.7427190213929862]);
  });

  it('splitmix32 uniforms and Box–Muller normals for weight init', () => {
    const g = new GaussianRng('x');
    expect([g.uniform(), g.normal(), g.normal()]).toEqual([0.7592659874353558, -0.4173594858290477, 1.702630098564807]);
  });
});
