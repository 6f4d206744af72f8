// Training byte-level BPE merges on a corpus (the tokenizer that uses them is tokenizer.ts).
import { MAX_VOCAB, PRETOKENIZE_PATTERN, SPECIAL_TOKENS, Tokenizer, encoder, escapeRegExp, pairKey } from './tokenizer.ts';

export interface TrainOptions {
  /** Total vocabulary: 256 bytes + special tokens + merges. Between MIN_VOCAB and MAX_VOCAB. */
  vocabSize: number;
  specialTokens?: readonly string[];
  /** Called after each merge with (merges done, merges wanted). */
  onProgress?: (done: number, total: number) => void;
}

/** Max-heap of (count, pair) with ties broken by the smaller pair key, for a deterministic order. */
class PairHeap {
  private counts: number[] = [];
  private keys: number[] = [];
  get size() {
    return this.counts.length;
  }
  private above(i: number, j: number) {
    return this.counts[i] > this.counts[j] || (this.counts[i] === this.counts[j] && this.keys[i] < this.keys[j]);
  }
  private swap(i: number, j: number) {
    [this.counts[i], this.counts[j]] = [this.counts[j], this.counts[i]];
    [this.keys[i], this.keys[j]] = [this.keys[j], this.keys[i]];
  }
  push(count: number, key: number) {
    this.counts.push(count);
    this.keys.push(key);
    let i = this.counts.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): [number, number] {
    const top: [number, number] = [this.counts[0], this.keys[0]];
    const lastC = this.counts.pop()!;
    const lastK = this.keys.pop()!;
    if (this.counts.length) {
      this.counts[0] = lastC;
      this.keys[0] = lastK;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.counts.length && this.above(l, m)) m = l;
        if (r < this.counts.length && this.above(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}

/** Distinct pre-tokens of a corpus with their counts (special-token strings are cut out first). */
export function countPretokens(
  corpus: Iterable<string>,
  specialTokens: readonly string[] = Object.values(SPECIAL_TOKENS),
  pattern = PRETOKENIZE_PATTERN,
): Map<string, number> {
  const counts = new Map<string, number>();
  const re = new RegExp(pattern, 'gu');
  const alternation = [...specialTokens]
    .sort((x, y) => y.length - x.length)
    .map(escapeRegExp)
    .join('|');
  const splitter = alternation ? new RegExp(alternation, 'g') : null;
  for (const text of corpus) {
    const parts = splitter ? text.split(splitter) : [text];
    for (const part of parts) for (const m of part.matchAll(re)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  return counts;
}

/**
 * Trains merges on a corpus. Pair counts are kept up to date incrementally: a merge only
 * revisits the distinct pre-tokens that contain its pair, and a heap with lazy deletion finds
 * the next most frequent pair, so the cost follows the text a merge touches, not the corpus.
 */
export function trainBpe(corpus: Iterable<string>, options: TrainOptions): Tokenizer {
  const specialTokens = options.specialTokens ?? Object.values(SPECIAL_TOKENS);
  const base = 256 + specialTokens.length;
  if (!Number.isInteger(options.vocabSize) || options.vocabSize < base || options.vocabSize > MAX_VOCAB) {
    throw new RangeError(
      `vocabSize must be an integer from ${base} (256 bytes + ${specialTokens.length} special tokens) to ${MAX_VOCAB}, got ${options.vocabSize}`,
    );
  }
  const wanted = options.vocabSize - base;
  const { words, freq } = distinctWords(corpus, specialTokens);
  const { pairCount, where } = pairIndex(words, freq);
  const heap = new PairHeap();
  for (const [k, c] of pairCount) heap.push(c, k);

  const merges: [number, number][] = [];
  const visited = new Int32Array(words.length).fill(-1);
  const delta = new Map<number, number>();
  while (merges.length < wanted && heap.size) {
    const [c, best] = heap.pop();
    if (pairCount.get(best) !== c || c <= 0) continue; // stale entry
    const a = Math.floor(best / MAX_VOCAB); // pairKey's inverse
    const b = best % MAX_VOCAB;
    const id = base + merges.length;
    const stamp = merges.length;
    merges.push([a, b]);
    delta.clear();
    for (const w of where.get(best) ?? []) {
      if (visited[w] === stamp) continue;
      visited[w] = stamp;
      const sym = words[w];
      let found = false;
      for (let i = 0; i < sym.length - 1; i++)
        if (sym[i] === a && sym[i + 1] === b) {
          found = true;
          break;
        }
      if (!found) continue; // the pair left this word in an earlier merge
      const f = freq[w];
      for (let i = 0; i < sym.length - 1; i++) {
        const k = pairKey(sym[i], sym[i + 1]);
        delta.set(k, (delta.get(k) ?? 0) - f);
      }
      const next = mergePair(sym, a, b, id);
      words[w] = next;
      for (let i = 0; i < next.length - 1; i++) {
        const k = pairKey(next[i], next[i + 1]);
        delta.set(k, (delta.get(k) ?? 0) + f);
        // Only pairs with the new id are new to this word; the others already list it.
        if (next[i] === id || next[i + 1] === id) {
          let list = where.get(k);
          if (!list) where.set(k, (list = []));
          if (list[list.length - 1] !== w) list.push(w);
        }
      }
    }
    where.delete(best);
    for (const [k, d] of delta) {
      if (d === 0) continue;
      const n = (pairCount.get(k) ?? 0) + d;
      if (n > 0) {
        pairCount.set(k, n);
        heap.push(n, k);
      } else {
        pairCount.delete(k);
        where.delete(k);
      }
    }
    options.onProgress?.(merges.length, wanted);
  }
  return new Tokenizer(merges, specialTokens);
}

/** The distinct pre-tokens of a corpus as byte sequences, with their counts; single bytes (nothing to merge) left out. */
function distinctWords(corpus: Iterable<string>, specialTokens: readonly string[]): { words: number[][]; freq: number[] } {
  const counts = countPretokens(corpus, specialTokens);
  const words: number[][] = [];
  const freq: number[] = [];
  for (const [piece, n] of counts) {
    const bytes = encoder.encode(piece);
    if (bytes.length < 2) continue; // nothing to merge inside a single byte
    words.push(Array.from(bytes));
    freq.push(n);
  }
  return { words, freq };
}

/** How often each adjacent pair occurs (weighted by word count), and the words it occurs in. */
function pairIndex(words: number[][], freq: number[]): { pairCount: Map<number, number>; where: Map<number, number[]> } {
  const pairCount = new Map<number, number>();
  const where = new Map<number, number[]>();
  for (let w = 0; w < words.length; w++) {
    const sym = words[w];
    for (let i = 0; i < sym.length - 1; i++) {
      const k = pairKey(sym[i], sym[i + 1]);
      pairCount.set(k, (pairCount.get(k) ?? 0) + freq[w]);
      let list = where.get(k);
      if (!list) where.set(k, (list = []));
      if (list[list.length - 1] !== w) list.push(w);
    }
  }
  return { pairCount, where };
}

/** The word with every non-overlapping (a, b), left to right, replaced by id. */
function mergePair(sym: number[], a: number, b: number, id: number): number[] {
  const next: number[] = [];
  for (let i = 0; i < sym.length; i++) {
    if (i < sym.length - 1 && sym[i] === a && sym[i + 1] === b) {
      next.push(id);
      i++;
    } else next.push(sym[i]);
  }
  return next;
}
