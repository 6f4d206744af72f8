// A small seeded generator so splits, the RL pool and template draws are reproducible from a
// seed in Node and in the browser alike (Math.random cannot be seeded).

/** mulberry32: 32-bit state, good enough for shuffles and draws, not for cryptography. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string mixed with a seed: a stable per-key draw that does not depend on order. */
export function hashString(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // Final avalanche so nearby keys land far apart.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform draw in [0, 1) fixed by (key, seed). */
export function keyedUniform(key: string, seed: number): number {
  return hashString(key, seed) / 4294967296;
}
