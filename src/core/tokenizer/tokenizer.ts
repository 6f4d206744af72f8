// Byte-level BPE: every string is UTF-8 bytes, so any text encodes with no unknown token and
// decodes back exactly. Ids: 0–255 the bytes, then the special tokens, then one id per merge.
// The tokenizer itself (encode, decode, JSON); training merges is in train.ts.

/** Special tokens of the turn structure and of the prediction tag (docs/method.md §1). */
export const SPECIAL_TOKENS = {
  bos: '<|bos|>',
  eos: '<|eos|>',
  pad: '<|pad|>',
  system: '<|system|>',
  action: '<|action|>',
  observation: '<|observation|>',
  endTurn: '<|end_turn|>',
  predictedOpen: '<predicted_observation>',
  predictedClose: '</predicted_observation>',
  thinkOpen: '<think>',
  thinkClose: '</think>',
} as const;
export type SpecialTokenName = keyof typeof SPECIAL_TOKENS;
const SPECIAL_NAMES = Object.keys(SPECIAL_TOKENS) as SpecialTokenName[];

/**
 * The tokens that end a predicted observation: its closing tag, and every token of the turn
 * structure. An observation's own text never encodes to one of them (data is always text), so a
 * model that writes one has finished the observation, whatever it meant to write next: a model
 * trained on trajectory rows closes history observations with <|end_turn|> and may close a
 * prediction the same way. <think>, </think> and the opening tag are not among them: a model
 * trained on reasoning labels writes them before its observation.
 */
export const OBSERVATION_STOP_TOKENS: readonly SpecialTokenName[] = ['predictedClose', 'eos', 'endTurn', 'action', 'observation', 'system', 'bos', 'pad'];

/** The ids of OBSERVATION_STOP_TOKENS in a tokenizer that has them (lookup: an id by token string, or undefined). */
export function observationStopIds(lookup: (token: string) => number | undefined | null): number[] {
  return OBSERVATION_STOP_TOKENS.flatMap((name) => {
    const id = lookup(SPECIAL_TOKENS[name]);
    return id === undefined || id === null ? [] : [id];
  });
}

/**
 * How text is cut before merging (merges never cross these boundaries): English contractions,
 * a letter run with its leading space, a digit run with its leading space, a run of other
 * symbols with its leading space, whitespace. The same pattern as GPT-2's, Unicode-aware.
 */
export const PRETOKENIZE_PATTERN = "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

export const MIN_VOCAB = 256 + SPECIAL_NAMES.length;
export const MAX_VOCAB = 65536;

export interface TokenizerJSON {
  type: 'byte-bpe';
  version: 1;
  pattern: string;
  /** In id order, starting at 256. */
  specialTokens: string[];
  /** Merge i makes id 256 + specialTokens.length + i from the pair [left, right]. */
  merges: [number, number][];
}

export const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** One number per id pair; ids are below MAX_VOCAB, so left·MAX_VOCAB + right is unique. */
export const pairKey = (a: number, b: number) => a * MAX_VOCAB + b;

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A piece of text to encode: the template's own (`data` false: its special-token strings are special tokens) or the sample's (`data` true: always text). */
export interface TextPart {
  text: string;
  data?: boolean;
}

/** The parts with neighbours of the same kind joined (a special token split over two template pieces is still the template's). */
export function literalRuns(parts: readonly TextPart[]): { text: string; data: boolean }[] {
  const runs: { text: string; data: boolean }[] = [];
  for (const p of parts) {
    if (!p.text) continue;
    const data = p.data === true;
    const last = runs[runs.length - 1];
    if (last && last.data === data) last.text += p.text;
    else runs.push({ text: p.text, data });
  }
  return runs;
}

export class Tokenizer {
  readonly specialTokens: readonly string[];
  readonly merges: readonly [number, number][];
  readonly pattern: string;
  /** Id of each special token by name (bos, eos, predictedOpen, ...). */
  readonly special: Readonly<Record<SpecialTokenName, number>>;
  /** Where a predicted observation ends: the ids of OBSERVATION_STOP_TOKENS. */
  readonly observationStops: readonly number[];
  private readonly pretokenizer: RegExp;
  private readonly specialSplitter: RegExp;
  private readonly specialIds = new Map<string, number>();
  private readonly ranks = new Map<number, number>();
  private readonly bytesOf: Uint8Array[] = [];
  private readonly mergeBase: number;
  private cache = new Map<string, number[]>();

  constructor(merges: [number, number][], specialTokens: readonly string[] = Object.values(SPECIAL_TOKENS), pattern = PRETOKENIZE_PATTERN) {
    this.specialTokens = specialTokens;
    this.merges = merges;
    this.pattern = pattern;
    this.pretokenizer = new RegExp(pattern, 'gu');
    this.mergeBase = 256 + specialTokens.length;
    for (let i = 0; i < 256; i++) this.bytesOf.push(Uint8Array.of(i));
    specialTokens.forEach((s, i) => {
      this.specialIds.set(s, 256 + i);
      this.bytesOf.push(encoder.encode(s));
    });
    merges.forEach(([a, b], i) => {
      const id = this.mergeBase + i;
      if (!(a >= 0 && b >= 0 && a < id && b < id) || (a >= 256 && a < this.mergeBase) || (b >= 256 && b < this.mergeBase)) {
        throw new Error(`merge ${i} joins ids ${a} and ${b}; a merge may only join byte or earlier merge ids below ${id}`);
      }
      this.ranks.set(pairKey(a, b), i);
      const left = this.bytesOf[a];
      const right = this.bytesOf[b];
      const joined = new Uint8Array(left.length + right.length);
      joined.set(left);
      joined.set(right, left.length);
      this.bytesOf.push(joined);
    });
    const special: Partial<Record<SpecialTokenName, number>> = {};
    for (const name of SPECIAL_NAMES) {
      const id = this.specialIds.get(SPECIAL_TOKENS[name]);
      if (id !== undefined) special[name] = id;
    }
    this.special = special as Record<SpecialTokenName, number>;
    this.observationStops = observationStopIds((t) => this.specialIds.get(t));
    // Longest first, so a special token that is a prefix of another never wins by accident.
    const alternation = [...specialTokens]
      .sort((x, y) => y.length - x.length)
      .map(escapeRegExp)
      .join('|');
    this.specialSplitter = new RegExp(alternation ? `(${alternation})` : '(?!)', 'g');
  }

  get vocabSize(): number {
    return this.mergeBase + this.merges.length;
  }

  /**
   * The ids of `text`. Special-token strings in the text become their ids unless `allowSpecial` is
   * false: a template's own text is encoded with them, a sample's text (data) never is.
   */
  encode(text: string, options: { allowSpecial?: boolean } = {}): number[] {
    const out: number[] = [];
    if (options.allowSpecial === false || !this.specialTokens.length) {
      this.encodeOrdinary(text, out);
      return out;
    }
    let last = 0;
    this.specialSplitter.lastIndex = 0;
    for (const m of text.matchAll(this.specialSplitter)) {
      if (m.index! > last) this.encodeOrdinary(text.slice(last, m.index), out);
      out.push(this.specialIds.get(m[0])!);
      last = m.index! + m[0].length;
    }
    if (last < text.length) this.encodeOrdinary(text.slice(last), out);
    return out;
  }

  /**
   * The ids of the parts' text joined, as encode(joined) gives them, except that a special token
   * counts only where its string lies in a template part: a data part is text, whatever it holds.
   * Merges cross the parts' boundaries as they would in the joined text.
   */
  encodeParts(parts: readonly TextPart[]): number[] {
    const out: number[] = [];
    let pending = '';
    for (const run of literalRuns(parts)) {
      if (run.data || !this.specialTokens.length) {
        pending += run.text;
        continue;
      }
      let last = 0;
      for (const m of run.text.matchAll(this.specialSplitter)) {
        pending += run.text.slice(last, m.index);
        if (pending) this.encodeOrdinary(pending, out);
        pending = '';
        out.push(this.specialIds.get(m[0])!);
        last = m.index! + m[0].length;
      }
      pending += run.text.slice(last);
    }
    if (pending) this.encodeOrdinary(pending, out);
    return out;
  }

  private encodeOrdinary(text: string, out: number[]) {
    for (const m of text.matchAll(this.pretokenizer)) {
      const piece = m[0];
      let ids = this.cache.get(piece);
      if (!ids) {
        ids = this.bpe(encoder.encode(piece));
        // Bounded so encoding a huge corpus does not grow memory without end.
        if (this.cache.size > 200_000) this.cache = new Map();
        this.cache.set(piece, ids);
      }
      for (const id of ids) out.push(id);
    }
  }

  private bpe(bytes: Uint8Array): number[] {
    let sym = Array.from(bytes);
    while (sym.length > 1) {
      let best = Infinity;
      for (let i = 0; i < sym.length - 1; i++) {
        const r = this.ranks.get(pairKey(sym[i], sym[i + 1]));
        if (r !== undefined && r < best) best = r;
      }
      if (best === Infinity) break;
      const [a, b] = this.merges[best];
      const id = this.mergeBase + best;
      const next: number[] = [];
      for (let i = 0; i < sym.length; i++) {
        if (i < sym.length - 1 && sym[i] === a && sym[i + 1] === b) {
          next.push(id);
          i++;
        } else next.push(sym[i]);
      }
      sym = next;
    }
    return sym;
  }

  /** UTF-8 bytes of a token sequence (for streaming decoders that must hold back partial characters). */
  decodeBytes(ids: readonly number[]): Uint8Array {
    let n = 0;
    for (const id of ids) n += this.tokenBytes(id).length;
    const out = new Uint8Array(n);
    let o = 0;
    for (const id of ids) {
      const b = this.tokenBytes(id);
      out.set(b, o);
      o += b.length;
    }
    return out;
  }

  /** Text of a token sequence; byte sequences that are not valid UTF-8 (a cut-off character) become U+FFFD. */
  decode(ids: readonly number[]): string {
    return decoder.decode(this.decodeBytes(ids));
  }

  tokenBytes(id: number): Uint8Array {
    const b = this.bytesOf[id];
    if (!b) throw new RangeError(`token id ${id} is outside the vocabulary (0 … ${this.vocabSize - 1})`);
    return b;
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < this.mergeBase;
  }

  toJSON(): TokenizerJSON {
    return { type: 'byte-bpe', version: 1, pattern: this.pattern, specialTokens: [...this.specialTokens], merges: this.merges.map(([a, b]) => [a, b]) };
  }

  /** Rebuilds a tokenizer from toJSON's output; throws with the offending field on bad input. */
  static fromJSON(json: unknown): Tokenizer {
    const j = json as Partial<TokenizerJSON>;
    if (typeof json !== 'object' || json === null) throw new Error('tokenizer JSON: expected an object');
    if (j.type !== 'byte-bpe') throw new Error(`tokenizer JSON /type: expected "byte-bpe", got ${JSON.stringify(j.type)}`);
    if (j.version !== 1) throw new Error(`tokenizer JSON /version: expected 1, got ${JSON.stringify(j.version)}`);
    if (typeof j.pattern !== 'string') throw new Error('tokenizer JSON /pattern: expected a string');
    if (!Array.isArray(j.specialTokens) || !j.specialTokens.every((s) => typeof s === 'string' && s.length > 0)) {
      throw new Error('tokenizer JSON /specialTokens: expected an array of non-empty strings');
    }
    if (!Array.isArray(j.merges)) throw new Error('tokenizer JSON /merges: expected an array of [left, right] id pairs');
    j.merges.forEach((m, i) => {
      if (!Array.isArray(m) || m.length !== 2 || !m.every((x) => Number.isInteger(x))) {
        throw new Error(`tokenizer JSON /merges/${i}: expected a pair of integer ids, got ${JSON.stringify(m)}`);
      }
    });
    try {
      return new Tokenizer(j.merges as [number, number][], j.specialTokens, j.pattern);
    } catch (e) {
      throw new Error(`tokenizer JSON: ${(e as Error).message}`);
    }
  }
}
