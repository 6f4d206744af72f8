// Plain-TypeScript twin of shaders/adamw.wgsl — AdamW with bias correction, decoupled weight
// decay on the tensors marked for it, and global gradient-norm clipping over the flat gradient
// buffer. Arithmetic in f64; the optimizer state (m, v) is kept in f32 arrays, as on the GPU.
// The default settings and the learning-rate schedule the host feeds it: src/core/model/optim.ts.
import type { AdamWConfig } from '../core/model/optim.ts';

/** A tensor's span [start, end) of the flat parameter buffer and whether weight decay applies. */
export interface DecaySegment {
  start: number;
  end: number;
  decay: boolean;
}

/** Decay is decided per 64-element block (tensors start at multiples of 64). */
export const DECAY_BLOCK = 64;

/**
 * One bit per 64-element block of the flat buffer: 1 = decay. Every decayed tensor must start
 * on a block boundary, and no block may hold both a decayed and an undecayed tensor (the
 * padding after a tensor up to the next block belongs to it).
 */
export function buildDecayMask(segments: DecaySegment[], size: number): Uint32Array {
  const blocks = Math.ceil(size / DECAY_BLOCK);
  const mask = new Uint32Array(Math.max(1, Math.ceil(blocks / 32)));
  const blockRange = (seg: DecaySegment): [number, number] => [Math.floor(seg.start / DECAY_BLOCK), Math.ceil(seg.end / DECAY_BLOCK)];
  for (const seg of segments) {
    if (!(Number.isInteger(seg.start) && Number.isInteger(seg.end) && seg.start >= 0 && seg.end >= seg.start && seg.end <= size)) {
      throw new RangeError(`decay segment [${seg.start}, ${seg.end}) does not lie within the ${size}-element parameter buffer`);
    }
    if (!seg.decay || seg.end === seg.start) continue;
    if (seg.start % DECAY_BLOCK !== 0) throw new RangeError(`decayed segment [${seg.start}, ${seg.end}) must start at a multiple of ${DECAY_BLOCK}`);
    const [b0, b1] = blockRange(seg);
    for (let b = b0; b < b1; b++) mask[b >>> 5] |= 1 << (b & 31);
  }
  for (const seg of segments) {
    if (seg.decay || seg.end === seg.start) continue;
    const [b0, b1] = blockRange(seg);
    for (let b = b0; b < b1; b++) {
      if (decayAt(mask, b * DECAY_BLOCK)) {
        throw new RangeError(`segment [${seg.start}, ${seg.end}) shares a ${DECAY_BLOCK}-element block with a decayed tensor; align tensors to ${DECAY_BLOCK}`);
      }
    }
  }
  return mask;
}

export function decayAt(mask: Uint32Array, i: number): boolean {
  const b = Math.floor(i / DECAY_BLOCK);
  return ((mask[b >>> 5] >>> (b & 31)) & 1) === 1;
}

/** √Σ g² over the whole buffer, in f64. */
export function gradNormRef(grads: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < grads.length; i++) s += grads[i] * grads[i];
  return Math.sqrt(s);
}

/** The clip factor applied to every gradient: min(1, max/(norm + 1e-6)), or 1 when disabled. */
export function clipScale(norm: number, maxGradNorm: number): number {
  return maxGradNorm > 0 ? Math.min(1, maxGradNorm / (norm + 1e-6)) : 1;
}

/**
 * One AdamW step, in place on params, m and v. `step` is the 0-based index of this step (Adam's
 * t = step + 1). Returns the gradient norm before clipping and the clip factor used.
 */
export function adamwStepRef(
  params: Float32Array,
  grads: ArrayLike<number>,
  m: Float32Array,
  v: Float32Array,
  mask: Uint32Array,
  cfg: AdamWConfig,
  step: number,
  lr: number,
): { norm: number; scale: number } {
  const norm = gradNormRef(grads);
  const scale = clipScale(norm, cfg.maxGradNorm);
  const t = step + 1;
  const bc1 = 1 - cfg.beta1 ** t;
  const bc2 = 1 - cfg.beta2 ** t;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i] * scale;
    const mi = cfg.beta1 * m[i] + (1 - cfg.beta1) * g;
    const vi = cfg.beta2 * v[i] + (1 - cfg.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    let p = params[i];
    if (decayAt(mask, i)) p -= lr * cfg.weightDecay * p;
    p -= (lr * (mi / bc1)) / (Math.sqrt(vi / bc2) + cfg.eps);
    params[i] = p;
  }
  return { norm, scale };
}
