// The one home of seeded randomness and string hashing. Splits, the RL pool, template draws,
// environments, model initialisation and the kernel tests all draw from here, so a seed means
// the same thing in Node and in the browser (Math.random cannot be seeded) and a result is a
// pure function of its seed. Every generator below is exact 32-bit integer maths (Math.imul,
// >>>), identical on every JS engine; only GaussianRng.normal uses Math.log/cos/sin.
//
// The outputs are pinned: the default dataset (public/), the train/validation split and the
// initial weights the GPU parity tests compare are all made from these streams, so changing a
// constant below changes every one of them.

/** 2^32: turns a 32-bit unsigned integer into a uniform in [0, 1). */
const TWO_POW_32 = 4294967296;

// Stream increments (Weyl sequences). Each step adds an odd constant to the state, so the state
// visits all 2^32 values before repeating; the mixing that follows turns that counter into
// well-spread bits.
/** mulberry32's increment (Tommy Ettinger's constant, chosen by search for good avalanche). */
const MULBERRY32_INCREMENT = 0x6d2b79f5;
/** The 32-bit golden ratio, 2^32/φ: the increment of splitmix32, farthest from any short cycle. */
const GOLDEN_RATIO_32 = 0x9e3779b9;

// FNV-1a (Fowler–Noll–Vo): its published 32-bit offset basis and prime.
const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

// MurmurHash3's 32-bit finaliser (fmix32) multipliers: FNV-1a alone leaves nearby keys close
// ("a1", "a2"); fmix32 makes every input bit flip about half the output bits.
const FMIX32_C1 = 0x85ebca6b;
const FMIX32_C2 = 0xc2b2ae35;

// splitmix32's output multipliers (the hash-prospector's low-bias 32-bit mixer).
const SPLITMIX32_C1 = 0x21f0aaad;
const SPLITMIX32_C2 = 0x735a2d97;

/** sfc32 discards this many outputs after seeding so the first draws do not echo the seed hash. */
const SFC32_WARMUP = 12;

/** Uniform in [0, 1) from a 32-bit integer (the sign bit is read as unsigned). */
function toUnit(x: number): number {
  return (x >>> 0) / TWO_POW_32;
}

/** mulberry32: 32-bit state, good enough for shuffles and draws, not for cryptography. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + MULBERRY32_INCREMENT) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return toUnit(t ^ (t >>> 14));
  };
}

/** n deterministic floats in [-1, 1) from mulberry32: kernel test inputs and self-test data. */
export function randomArray(n: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = next() * 2 - 1;
  return out;
}

/**
 * FNV-1a over UTF-16 code units with the seed folded into the offset basis, then fmix32: a
 * stable, well-mixed unsigned 32-bit hash of (text, seed) that does not depend on order.
 */
export function hashString(text: string, seed = 0): number {
  let h = (FNV_OFFSET_BASIS ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, FMIX32_C1) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, FMIX32_C2) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform draw in [0, 1) fixed by (key, seed). */
export function keyedUniform(key: string, seed: number): number {
  return hashString(key, seed) / TWO_POW_32;
}

/** cyrb128: four 32-bit words from a string, enough state to seed sfc32. */
export function hash128(str: string): [number, number, number, number] {
  // cyrb128's four starting words and multipliers (odd constants from its published source).
  let h1 = 1779033703,
    h2 = 3144134277,
    h3 = 1013904242,
    h4 = 2773480762;
  for (let i = 0; i < str.length; i++) {
    const k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044813);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044813);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/**
 * sfc32 with helpers: the generator of environments and agents. Everything an environment emits
 * must be a pure function of its seed and the actions, so no Math.random anywhere below envs/.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string) {
    // Hash the seed into four words so nearby seeds (0, 1, 2) give unrelated streams.
    const h = hash128(String(seed));
    this.a = h[0];
    this.b = h[1];
    this.c = h[2];
    this.d = h[3];
    for (let i = 0; i < SFC32_WARMUP; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return toUnit(t);
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick on an empty list');
    return items[Math.floor(this.next() * items.length)];
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  /** k distinct items, order random. */
  sample<T>(items: readonly T[], k: number): T[] {
    return this.shuffle(items).slice(0, Math.min(k, items.length));
  }

  /** A child stream, independent of how much of this one is consumed later. */
  fork(label: string): Rng {
    return new Rng(`${this.int(0, 0x7fffffff)}:${label}`);
  }
}

/**
 * Normals for weight initialisation: splitmix32 for uniforms and Box–Muller for normals.
 * Math.log/cos/sin are the engine's; V8 (Chrome and Node) computes them identically, and the f32
 * rounding of the result absorbs last-bit differences elsewhere in practice.
 */
export class GaussianRng {
  private state: number;
  private spare: number | null = null;

  constructor(seed: number | string) {
    this.state = hashString(String(seed)) | 0;
  }

  /** Uniform in [0, 1) with 32 random bits. */
  uniform(): number {
    this.state = (this.state + GOLDEN_RATIO_32) | 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), SPLITMIX32_C1);
    z = Math.imul(z ^ (z >>> 15), SPLITMIX32_C2);
    z ^= z >>> 15;
    return toUnit(z);
  }

  /** Standard normal. */
  normal(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    // 1 - u lies in (0, 1], so the log is finite.
    const r = Math.sqrt(-2 * Math.log(1 - this.uniform()));
    const theta = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }
}
