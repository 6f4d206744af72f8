// GPT-2-style initialisation, seeded: the same seed gives the same bytes, so a GPU run and the
// CPU reference can start from identical weights and a test can name its starting point.
import { paramLayout, type ParamLayout, type ParamTensor } from './params.ts';
import type { ModelConfig } from './config.ts';

/** Standard deviation of every weight matrix and embedding (GPT-2). */
export const INIT_STD = 0.02;

/**
 * A small seeded generator: splitmix32-style integer hashing for uniforms (exact integer
 * maths, identical on every JS engine) and Box–Muller for normals. Math.log/cos/sin are the
 * engine's; V8 (Chrome and Node) computes them identically, and the f32 rounding of the result
 * absorbs last-bit differences elsewhere in practice.
 */
export class GaussianRng {
  private state: number;
  private spare: number | null = null;

  constructor(seed: number | string) {
    this.state = hash32(String(seed));
  }

  /** Uniform in [0, 1) with 32 random bits. */
  uniform(): number {
    this.state = (this.state + 0x9e3779b9) | 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z ^= z >>> 15;
    return (z >>> 0) / 4294967296;
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

/** FNV-1a over UTF-16 code units, then a murmur finaliser: string → well-mixed 32-bit seed. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** The standard deviation a tensor is drawn with, or null for a constant fill. */
export function initStd(t: ParamTensor, layout: ParamLayout): number | null {
  if (t.kind === 'norm' || t.kind === 'bias') return null;
  // Residual projections write into the residual stream once per block per branch (2 per
  // layer); scaling them by 1/sqrt(2·layers) keeps the stream's variance independent of depth.
  if (t.name.endsWith('.c_proj.weight')) return INIT_STD / Math.sqrt(2 * layout.config.layers);
  return INIT_STD;
}

/**
 * Fresh parameters in the flat layout: matrices and embeddings ~ N(0, 0.02²) (residual
 * projections scaled down), biases 0, norm weights 1, norm biases 0, padding 0. Each tensor
 * draws from its own stream seeded by (seed, name), so adding a tensor to the layout leaves the
 * others' values unchanged.
 */
export function initParams(config: ModelConfig, seed: number | string = 0, layout: ParamLayout = paramLayout(config)): Float32Array {
  const flat = new Float32Array(layout.totalSize);
  for (const t of layout.tensors) {
    const view = flat.subarray(t.offset, t.offset + t.size);
    const std = initStd(t, layout);
    if (std === null) {
      view.fill(t.kind === 'norm' && t.name.endsWith('.weight') ? 1 : 0);
      continue;
    }
    const rng = new GaussianRng(`${String(seed)}/${t.name}`);
    for (let i = 0; i < view.length; i++) view[i] = std * rng.normal();
  }
  return flat;
}
