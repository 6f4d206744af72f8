// Tiny deterministic data for the reference model's tests and the GPU parity test: a repetitive
// toy corpus (so a tiny model can learn it in a few hundred steps) and fixed batches from it.
import type { TokenBatch } from './gpt.ts';

/**
 * A few short sentences repeated, as byte-level tokens. Repetitive on purpose: after a couple
 * of characters of context the next one is nearly determined, so the achievable loss is far
 * below the unigram entropy, and "did it learn" has a clear answer.
 */
export const TOY_TEXT = 'the cat sat on the mat. the dog sat on the log. a cat and a dog. ';

export function toyCorpus(repeats = 40): Uint8Array {
  return new TextEncoder().encode(TOY_TEXT.repeat(repeats));
}

/** Maps a corpus onto ids 0..n−1 (in order of first appearance), for a model with a small vocab. */
export function compactVocab(corpus: ArrayLike<number>): { tokens: Uint32Array; vocab: number[] } {
  const ids = new Map<number, number>();
  const tokens = new Uint32Array(corpus.length);
  for (let i = 0; i < corpus.length; i++) {
    let id = ids.get(corpus[i]);
    if (id === undefined) ids.set(corpus[i], (id = ids.size));
    tokens[i] = id;
  }
  return { tokens, vocab: [...ids.keys()] };
}

/** Entropy (nats) of the corpus's token frequencies: the loss of the best context-free model. */
export function unigramEntropy(tokens: ArrayLike<number>): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < tokens.length; i++) counts.set(tokens[i], (counts.get(tokens[i]) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const q = n / tokens.length;
    h -= q * Math.log(q);
  }
  return h;
}

/**
 * Batch number `index`: B windows of T+1 tokens at offsets drawn from a seeded counter hash, so
 * any batch can be rebuilt from (seed, index) alone. inputs = window[0..T), targets = window[1..T].
 */
export function toyBatch(tokens: ArrayLike<number>, B: number, T: number, index: number, seed = 0): TokenBatch {
  const span = tokens.length - T - 1;
  if (span < 1) throw new RangeError(`toyBatch: corpus of ${tokens.length} tokens is too short for T = ${T}`);
  const inputs = new Uint32Array(B * T);
  const targets = new Uint32Array(B * T);
  for (let b = 0; b < B; b++) {
    let h = Math.imul((Math.imul(index, 0x9e3779b1) + Math.imul(b, 0x85ebca6b) + Math.imul(seed, 0xc2b2ae35)) | 0, 0x27d4eb2f) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
    const start = ((h ^ (h >>> 13)) >>> 0) % span;
    for (let t = 0; t < T; t++) {
      inputs[b * T + t] = tokens[start + t];
      targets[b * T + t] = tokens[start + t + 1];
    }
  }
  return { B, T, inputs, targets };
}
