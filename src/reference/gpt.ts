// A complete GPT on the CPU in plain TypeScript: forward, weighted cross-entropy loss, full
// backward into the flat gradient, AdamW and the learning-rate schedule. It is the oracle the
// WebGPU model follows (20 training steps must track these losses within 1e-3 relative), so it
// is written the direct way, with f64 activations and accumulation, for clarity over speed.
//
// Parameters use the flat layout of src/model/params.ts (Float32Array as on the GPU, or
// Float64Array for finite-difference checks). Activations are row-major [B·T, width]; row
// r = b·T + t is token t of sequence b, at position t.
//
// The network (per block, pre-norm as in GPT-2):
//   x  = wte[token] (+ wpe[t] for learned positions)
//   qkv = norm_1(x)·W_attn + b_attn                     [rows, 3d]: q | k | v, head h at h·hs
//   RoPE on q and k when positions = 'rope' (NeoX rotate-half: pairs (i, i + hs/2),
//        angle t · base^(−2i/hs))
//   a  = softmax(q·kᵀ / sqrt(hs), causal) · v           per head, heads concatenated
//   x  = x + a·W_proj + b_proj
//   x  = x + gelu_tanh(norm_2(x)·W_fc + b_fc)·W_mproj + b_mproj
//   logits = norm_f(x)·wteᵀ   (or ·lm_headᵀ when untied)
//   loss = Σ w_r · CE_r / Σ w_r   (0 when Σ w_r = 0; weight-0 rows are skipped entirely, so
//          their targets may be anything, e.g. padding)
import { headSize, mlpHidden, type ModelConfig } from '../model/config.ts';
import { paramLayout, type ParamLayout } from '../model/params.ts';
import { sampleRef, type SampleOptions } from './sampling.ts';

type Floats = Float32Array | Float64Array;
// Internal blocks take f64 parameters only: monomorphic loops run several times faster in V8.
type F64 = Float64Array;

export interface TokenBatch {
  /** Sequences. */
  B: number;
  /** Tokens per sequence (≤ contextLength). */
  T: number;
  /** [B·T] input token ids. */
  inputs: ArrayLike<number>;
  /** [B·T] the token each position should predict; ignored where the weight is 0. */
  targets: ArrayLike<number>;
  /** [B·T] per-token loss weight ≥ 0 (SPEC §4's mask); all 1 when absent. */
  weights?: ArrayLike<number>;
  /** The gradient's normaliser: a step minimises Σ w·CE / lossNorm. Default: the batch's target tokens (weight > 0). */
  lossNorm?: number;
}

// ---- building blocks --------------------------------------------------------------------

/** y = x·W + b with W [nIn, nOut] at wOff and b at bOff (−1: no bias). */
function linear(x: Float64Array, rows: number, nIn: number, nOut: number, p: F64, wOff: number, bOff: number): Float64Array {
  const y = new Float64Array(rows * nOut);
  for (let r = 0; r < rows; r++) {
    const yo = r * nOut;
    if (bOff >= 0) for (let o = 0; o < nOut; o++) y[yo + o] = p[bOff + o];
    for (let i = 0; i < nIn; i++) {
      const xv = x[r * nIn + i];
      const wo = wOff + i * nOut;
      for (let o = 0; o < nOut; o++) y[yo + o] += xv * p[wo + o];
    }
  }
  return y;
}

/** Backward of linear: accumulates dW, db into grad; returns dx. */
function linearBackward(
  dy: Float64Array,
  x: Float64Array,
  rows: number,
  nIn: number,
  nOut: number,
  p: F64,
  wOff: number,
  bOff: number,
  grad: Float64Array,
): Float64Array {
  const dx = new Float64Array(rows * nIn);
  for (let r = 0; r < rows; r++) {
    const yo = r * nOut;
    if (bOff >= 0) for (let o = 0; o < nOut; o++) grad[bOff + o] += dy[yo + o];
    for (let i = 0; i < nIn; i++) {
      const wo = wOff + i * nOut;
      const xv = x[r * nIn + i];
      let acc = 0;
      for (let o = 0; o < nOut; o++) {
        acc += dy[yo + o] * p[wo + o];
        grad[wo + o] += xv * dy[yo + o];
      }
      dx[r * nIn + i] = acc;
    }
  }
  return dx;
}

interface NormStats {
  y: Float64Array;
  mean: Float64Array;
  rstd: Float64Array;
}

/**
 * LayerNorm: (x − mean)·rstd·w + b with rstd = 1/sqrt(var + eps), var biased (÷ d).
 * RMSNorm:   x·rstd·w with rstd = 1/sqrt(mean(x²) + eps) (the same code with mean fixed at 0).
 */
function normForward(x: Float64Array, rows: number, d: number, c: ModelConfig, p: F64, wOff: number, bOff: number): NormStats {
  const y = new Float64Array(rows * d);
  const mean = new Float64Array(rows);
  const rstd = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    let mu = 0;
    if (c.norm === 'layernorm') {
      for (let i = 0; i < d; i++) mu += x[o + i];
      mu /= d;
    }
    let v = 0;
    for (let i = 0; i < d; i++) v += (x[o + i] - mu) ** 2;
    const rs = 1 / Math.sqrt(v / d + c.normEps);
    for (let i = 0; i < d; i++) y[o + i] = (x[o + i] - mu) * rs * p[wOff + i] + (bOff >= 0 ? p[bOff + i] : 0);
    mean[r] = mu;
    rstd[r] = rs;
  }
  return { y, mean, rstd };
}

/** dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)) with ĝ = dy·w (the mean(ĝ) term is LayerNorm's only). */
function normBackward(
  dy: Float64Array,
  x: Float64Array,
  s: NormStats,
  rows: number,
  d: number,
  c: ModelConfig,
  p: F64,
  wOff: number,
  bOff: number,
  grad: Float64Array,
): Float64Array {
  const dx = new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) {
    const o = r * d;
    const mu = s.mean[r];
    const rs = s.rstd[r];
    let sumG = 0;
    let sumGX = 0;
    for (let i = 0; i < d; i++) {
      const xh = (x[o + i] - mu) * rs;
      const g = dy[o + i] * p[wOff + i];
      grad[wOff + i] += dy[o + i] * xh;
      if (bOff >= 0) grad[bOff + i] += dy[o + i];
      sumG += g;
      sumGX += g * xh;
    }
    const mG = c.norm === 'layernorm' ? sumG / d : 0;
    const mGX = sumGX / d;
    for (let i = 0; i < d; i++) {
      const xh = (x[o + i] - mu) * rs;
      dx[o + i] = rs * (dy[o + i] * p[wOff + i] - mG - xh * mGX);
    }
  }
  return dx;
}

const GELU_K = Math.sqrt(2 / Math.PI);
const GELU_C = 0.044715;
const gelu = (x: number) => 0.5 * x * (1 + Math.tanh(GELU_K * (x + GELU_C * x * x * x)));
function geluGrad(x: number): number {
  const t = Math.tanh(GELU_K * (x + GELU_C * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_K * (1 + 3 * GELU_C * x * x);
}

/**
 * Rotates q and k of qkv [B·T, 3d] in place, by +θ (forward) or −θ (backward: a rotation's
 * transpose is its inverse, so the same code maps dq', dk' to dq, dk).
 */
function rope(qkv: Float64Array, B: number, T: number, c: ModelConfig, dir: 1 | -1, positionOffset = 0): void {
  const d = c.dModel;
  const hs = headSize(c);
  const half = hs / 2;
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      const pos = positionOffset + t;
      for (let i = 0; i < half; i++) {
        const theta = pos * Math.pow(c.ropeBase, (-2 * i) / hs);
        const cs = Math.cos(theta);
        const sn = dir * Math.sin(theta);
        for (let part = 0; part < 2; part++) {
          for (let h = 0; h < c.heads; h++) {
            const o = (b * T + t) * 3 * d + part * d + h * hs;
            const x1 = qkv[o + i];
            const x2 = qkv[o + i + half];
            qkv[o + i] = x1 * cs - x2 * sn;
            qkv[o + i + half] = x1 * sn + x2 * cs;
          }
        }
      }
    }
  }
}

/** Causal attention; returns the output [B·T, d] and the probabilities [B, H, T, T]. */
function attention(qkv: Float64Array, B: number, T: number, c: ModelConfig): { out: Float64Array; probs: Float64Array } {
  const d = c.dModel;
  const H = c.heads;
  const hs = headSize(c);
  const scale = 1 / Math.sqrt(hs);
  const out = new Float64Array(B * T * d);
  const probs = new Float64Array(B * H * T * T);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const qo = (b * T + t) * 3 * d + h * hs;
        const po = ((b * H + h) * T + t) * T;
        let max = -Infinity;
        for (let j = 0; j <= t; j++) {
          const ko = (b * T + j) * 3 * d + d + h * hs;
          let s = 0;
          for (let i = 0; i < hs; i++) s += qkv[qo + i] * qkv[ko + i];
          probs[po + j] = s * scale;
          if (probs[po + j] > max) max = probs[po + j];
        }
        let sum = 0;
        for (let j = 0; j <= t; j++) {
          probs[po + j] = Math.exp(probs[po + j] - max);
          sum += probs[po + j];
        }
        const oo = (b * T + t) * d + h * hs;
        for (let j = 0; j <= t; j++) {
          const pj = (probs[po + j] /= sum);
          const vo = (b * T + j) * 3 * d + 2 * d + h * hs;
          for (let i = 0; i < hs; i++) out[oo + i] += pj * qkv[vo + i];
        }
      }
    }
  }
  return { out, probs };
}

/** dS_j = P_j·(dP_j − Σ_k P_k dP_k) with dP_j = dout_t·v_j; returns dqkv [B·T, 3d]. */
function attentionBackward(dout: Float64Array, qkv: Float64Array, probs: Float64Array, B: number, T: number, c: ModelConfig): Float64Array {
  const d = c.dModel;
  const H = c.heads;
  const hs = headSize(c);
  const scale = 1 / Math.sqrt(hs);
  const dqkv = new Float64Array(B * T * 3 * d);
  const dp = new Float64Array(T);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const qo = (b * T + t) * 3 * d + h * hs;
        const po = ((b * H + h) * T + t) * T;
        const oo = (b * T + t) * d + h * hs;
        let dot = 0;
        for (let j = 0; j <= t; j++) {
          const vo = (b * T + j) * 3 * d + 2 * d + h * hs;
          let s = 0;
          for (let i = 0; i < hs; i++) {
            s += dout[oo + i] * qkv[vo + i];
            dqkv[vo + i] += probs[po + j] * dout[oo + i];
          }
          dp[j] = s;
          dot += probs[po + j] * s;
        }
        for (let j = 0; j <= t; j++) {
          const ds = probs[po + j] * (dp[j] - dot) * scale;
          const ko = (b * T + j) * 3 * d + d + h * hs;
          for (let i = 0; i < hs; i++) {
            dqkv[qo + i] += ds * qkv[ko + i];
            dqkv[ko + i] += ds * qkv[qo + i];
          }
        }
      }
    }
  }
  return dqkv;
}

// ---- the model ----------------------------------------------------------------------------

interface BlockActivations {
  xIn: Float64Array;
  ln1: NormStats;
  qkv: Float64Array; // after RoPE
  probs: Float64Array;
  att: Float64Array;
  xMid: Float64Array;
  ln2: NormStats;
  fc: Float64Array; // before GELU
  act: Float64Array; // after GELU
}

export interface ForwardResult {
  /** [B·T, vocab] */
  logits: Float64Array;
  blocks: BlockActivations[];
  xFinal: Float64Array;
  lnF: NormStats;
  layout: ParamLayout;
  /** The parameters as f64 (the input itself when it already was). */
  params: Float64Array;
}

function checkParams(p: Floats, layout: ParamLayout) {
  if (p.length !== layout.totalSize) throw new RangeError(`gpt: params hold ${p.length} elements, the layout needs ${layout.totalSize}`);
}

/** Forward pass over B sequences of T tokens (positions positionOffset..+T−1). */
export function gptForward(
  params: Floats,
  c: ModelConfig,
  inputs: ArrayLike<number>,
  B: number,
  T: number,
  positionOffset = 0,
  layout: ParamLayout = paramLayout(c),
): ForwardResult {
  checkParams(params, layout);
  // One f64 copy keeps every loop below on a single array type (V8 optimises those best).
  const p = params instanceof Float64Array ? params : Float64Array.from(params);
  const d = c.dModel;
  const f = mlpHidden(c);
  const V = c.vocabSize;
  const rows = B * T;
  if (inputs.length !== rows) throw new RangeError(`gpt: ${inputs.length} input tokens for B·T = ${rows}`);
  if (positionOffset + T > c.contextLength) throw new RangeError(`gpt: positions up to ${positionOffset + T} exceed contextLength ${c.contextLength}`);

  let x = new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) {
    const tok = inputs[r];
    if (!Number.isInteger(tok) || tok < 0 || tok >= V) throw new RangeError(`gpt: input token ${tok} at row ${r} is outside the vocabulary (${V})`);
    for (let i = 0; i < d; i++) x[r * d + i] = p[layout.wte.offset + tok * d + i];
    if (layout.wpe) {
      const pos = positionOffset + (r % T);
      for (let i = 0; i < d; i++) x[r * d + i] += p[layout.wpe.offset + pos * d + i];
    }
  }

  const bias = (t?: { offset: number }) => (t ? t.offset : -1);
  const blocks: BlockActivations[] = [];
  for (const bp of layout.blocks) {
    const xIn = x;
    const ln1 = normForward(xIn, rows, d, c, p, bp.ln1Weight.offset, bias(bp.ln1Bias));
    const qkv = linear(ln1.y, rows, d, 3 * d, p, bp.attnWeight.offset, bp.attnBias.offset);
    if (c.positions === 'rope') rope(qkv, B, T, c, 1, positionOffset);
    const { out: att, probs } = attention(qkv, B, T, c);
    const proj = linear(att, rows, d, d, p, bp.attnProjWeight.offset, bp.attnProjBias.offset);
    const xMid = new Float64Array(rows * d);
    for (let i = 0; i < xMid.length; i++) xMid[i] = xIn[i] + proj[i];
    const ln2 = normForward(xMid, rows, d, c, p, bp.ln2Weight.offset, bias(bp.ln2Bias));
    const fc = linear(ln2.y, rows, d, f, p, bp.fcWeight.offset, bp.fcBias.offset);
    const act = fc.map(gelu);
    const mlp = linear(act, rows, f, d, p, bp.mlpProjWeight.offset, bp.mlpProjBias.offset);
    x = new Float64Array(rows * d);
    for (let i = 0; i < x.length; i++) x[i] = xMid[i] + mlp[i];
    blocks.push({ xIn, ln1, qkv, probs, att, xMid, ln2, fc, act });
  }

  const lnF = normForward(x, rows, d, c, p, layout.lnFWeight.offset, bias(layout.lnFBias));
  const head = (layout.lmHead ?? layout.wte).offset;
  const logits = new Float64Array(rows * V);
  for (let r = 0; r < rows; r++) {
    for (let v = 0; v < V; v++) {
      let s = 0;
      for (let i = 0; i < d; i++) s += lnF.y[r * d + i] * p[head + v * d + i];
      logits[r * V + v] = s;
    }
  }
  return { logits, blocks, xFinal: x, lnF, layout, params: p };
}

export interface LossResult {
  /** Σ w·CE / Σ w (0 when Σ w = 0): the weighted mean, what is reported. */
  loss: number;
  /** Σ w·CE / lossNorm: what the gradient is of, so a token's gradient scales with its own weight only. */
  objective: number;
  /** Σ w. */
  weightSum: number;
  /** batch.lossNorm, else the number of tokens with weight > 0. */
  lossNorm: number;
  /** [B·T] CE of each token (0 where its weight is 0). */
  tokenLoss: Float64Array;
  /** [B·T, vocab] ∂objective/∂logits = w/lossNorm · (softmax − onehot). */
  dlogits: Float64Array;
}

/** Weighted softmax cross-entropy and its gradient wrt the logits, in one pass (like the kernel). */
export function weightedCrossEntropy(logits: Float64Array, batch: TokenBatch, V: number): LossResult {
  const rows = batch.B * batch.T;
  if (batch.targets.length !== rows) throw new RangeError(`gpt: ${batch.targets.length} targets for B·T = ${rows}`);
  if (batch.weights && batch.weights.length !== rows) throw new RangeError(`gpt: ${batch.weights.length} weights for B·T = ${rows}`);
  const w = (r: number) => (batch.weights ? batch.weights[r] : 1);
  let W = 0;
  let targets = 0;
  for (let r = 0; r < rows; r++) {
    const wr = w(r);
    if (!(wr >= 0) || !Number.isFinite(wr)) throw new RangeError(`gpt: loss weight ${wr} at row ${r} must be finite and ≥ 0`);
    W += wr;
    if (wr > 0) targets++;
  }
  const norm = batch.lossNorm ?? targets;
  if (!(norm > 0 || (norm === 0 && W === 0)) || !Number.isFinite(norm)) throw new RangeError(`gpt: lossNorm ${norm} must be finite and > 0`);
  const tokenLoss = new Float64Array(rows);
  const dlogits = new Float64Array(rows * V);
  let total = 0;
  for (let r = 0; r < rows; r++) {
    const wr = w(r);
    if (wr === 0) continue;
    const tgt = batch.targets[r];
    if (!Number.isInteger(tgt) || tgt < 0 || tgt >= V) throw new RangeError(`gpt: target ${tgt} at row ${r} is outside the vocabulary (${V})`);
    const o = r * V;
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, logits[o + v]);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(logits[o + v] - max);
    const lse = max + Math.log(sum);
    tokenLoss[r] = lse - logits[o + tgt];
    total += wr * tokenLoss[r];
    const k = wr / norm;
    for (let v = 0; v < V; v++) dlogits[o + v] = k * Math.exp(logits[o + v] - lse);
    dlogits[o + tgt] -= k;
  }
  return { loss: W > 0 ? total / W : 0, objective: norm > 0 ? total / norm : 0, weightSum: W, lossNorm: norm, tokenLoss, dlogits };
}

/** The loss only (for finite differences and evaluation). */
export function gptLoss(p: Floats, c: ModelConfig, batch: TokenBatch): number {
  const fw = gptForward(p, c, batch.inputs, batch.B, batch.T);
  return weightedCrossEntropy(fw.logits, batch, c.vocabSize).loss;
}

export interface LossAndGrad extends LossResult {
  /** ∂objective/∂params in the flat layout (padding stays 0); (Σ w / lossNorm)·∂loss/∂params. */
  grad: Float64Array;
}

/** Forward, loss and the full backward pass. */
export function gptLossAndGrad(params: Floats, c: ModelConfig, batch: TokenBatch, layout: ParamLayout = paramLayout(c)): LossAndGrad {
  const { B, T } = batch;
  const fw = gptForward(params, c, batch.inputs, B, T, 0, layout);
  const p = fw.params;
  const ce = weightedCrossEntropy(fw.logits, batch, c.vocabSize);
  const grad = new Float64Array(layout.totalSize);
  const d = c.dModel;
  const f = mlpHidden(c);
  const V = c.vocabSize;
  const rows = B * T;
  const bias = (t?: { offset: number }) => (t ? t.offset : -1);

  // logits = xf·Eᵀ: dxf = dlogits·E, dE += dlogitsᵀ·xf (rows with weight 0 have dlogits 0).
  const head = (layout.lmHead ?? layout.wte).offset;
  const dxf = new Float64Array(rows * d);
  for (let r = 0; r < rows; r++) {
    if (batch.weights && batch.weights[r] === 0) continue;
    for (let v = 0; v < V; v++) {
      const g = ce.dlogits[r * V + v];
      if (g === 0) continue;
      for (let i = 0; i < d; i++) {
        dxf[r * d + i] += g * p[head + v * d + i];
        grad[head + v * d + i] += g * fw.lnF.y[r * d + i];
      }
    }
  }
  let dx = normBackward(dxf, fw.xFinal, fw.lnF, rows, d, c, p, layout.lnFWeight.offset, bias(layout.lnFBias), grad);

  for (let l = c.layers - 1; l >= 0; l--) {
    const bp = layout.blocks[l];
    const a = fw.blocks[l];
    // MLP branch: x = xMid + mlp(ln2(xMid)).
    const dAct = linearBackward(dx, a.act, rows, f, d, p, bp.mlpProjWeight.offset, bp.mlpProjBias.offset, grad);
    const dFc = dAct.map((g, i) => g * geluGrad(a.fc[i]));
    const dLn2 = linearBackward(dFc, a.ln2.y, rows, d, f, p, bp.fcWeight.offset, bp.fcBias.offset, grad);
    const dMid = normBackward(dLn2, a.xMid, a.ln2, rows, d, c, p, bp.ln2Weight.offset, bias(bp.ln2Bias), grad);
    for (let i = 0; i < dMid.length; i++) dMid[i] += dx[i];
    // Attention branch: xMid = xIn + proj(attn(ln1(xIn))).
    const dAtt = linearBackward(dMid, a.att, rows, d, d, p, bp.attnProjWeight.offset, bp.attnProjBias.offset, grad);
    const dQkv = attentionBackward(dAtt, a.qkv, a.probs, B, T, c);
    if (c.positions === 'rope') rope(dQkv, B, T, c, -1);
    const dLn1 = linearBackward(dQkv, a.ln1.y, rows, d, 3 * d, p, bp.attnWeight.offset, bp.attnBias.offset, grad);
    const dIn = normBackward(dLn1, a.xIn, a.ln1, rows, d, c, p, bp.ln1Weight.offset, bias(bp.ln1Bias), grad);
    for (let i = 0; i < dIn.length; i++) dIn[i] += dMid[i];
    dx = dIn;
  }

  // Embeddings: scatter-add into the rows that were looked up.
  for (let r = 0; r < rows; r++) {
    const tok = batch.inputs[r];
    for (let i = 0; i < d; i++) grad[layout.wte.offset + tok * d + i] += dx[r * d + i];
    if (layout.wpe) for (let i = 0; i < d; i++) grad[layout.wpe.offset + (r % T) * d + i] += dx[r * d + i];
  }
  return { ...ce, grad };
}

// ---- optimiser and schedule ---------------------------------------------------------------

export interface AdamWOptions {
  lr: number;
  /** nanoGPT / GPT-3 values: β2 = 0.95 recovers faster from loss spikes than 0.999 at small batch. */
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled decay, applied on the layout's decay segments only (matrices). */
  weightDecay: number;
  /** Global gradient L2-norm limit; 0 turns clipping off. */
  gradClip: number;
}

export const DEFAULT_ADAMW: Omit<AdamWOptions, 'lr'> = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, gradClip: 1.0 };

/**
 * One AdamW step, in place on params, m and v (all in the flat layout). `t` is the 1-based
 * number of this step. Exactly (PyTorch's AdamW, with clipping first):
 *   norm  = sqrt(Σ g²) over the whole flat gradient;  s = clip > 0 ? min(1, clip / (norm + 1e-6)) : 1
 *   g' = s·g;  m = β1·m + (1−β1)·g';  v = β2·v + (1−β2)·g'²
 *   p  = p − lr·wd·p  (decay segments only);  p = p − lr·(m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 * Returns the norm before clipping and the scale applied.
 */
export function adamwStep(
  layout: ParamLayout,
  params: Floats,
  grad: ArrayLike<number>,
  m: Floats,
  v: Floats,
  t: number,
  o: AdamWOptions,
): { gradNorm: number; clipScale: number } {
  if (!Number.isInteger(t) || t < 1) throw new RangeError(`adamw: step t must be a positive integer, got ${t}`);
  let sq = 0;
  for (let i = 0; i < grad.length; i++) sq += grad[i] * grad[i];
  const gradNorm = Math.sqrt(sq);
  // The 1e-6 keeps a zero gradient finite; it matches the AdamW kernel (shaders/adamw.wgsl).
  const clipScale = o.gradClip > 0 ? Math.min(1, o.gradClip / (gradNorm + 1e-6)) : 1;
  const bc1 = 1 - Math.pow(o.beta1, t);
  const bc2 = 1 - Math.pow(o.beta2, t);
  const decay = new Uint8Array(layout.totalSize);
  for (const s of layout.decaySegments) decay.fill(1, s.offset, s.offset + s.size);
  for (let i = 0; i < layout.totalSize; i++) {
    const g = grad[i] * clipScale;
    const mi = o.beta1 * m[i] + (1 - o.beta1) * g;
    const vi = o.beta2 * v[i] + (1 - o.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    let pi = params[i];
    if (decay[i]) pi -= o.lr * o.weightDecay * pi;
    params[i] = pi - (o.lr * (mi / bc1)) / (Math.sqrt(vi / bc2) + o.eps);
  }
  return { gradNorm, clipScale };
}

export interface LrSchedule {
  maxLr: number;
  /** Where the cosine ends (nanoGPT: maxLr / 10). */
  minLr: number;
  warmupSteps: number;
  /** Steps of the whole run; beyond it the rate stays at minLr. */
  totalSteps: number;
}

/**
 * Learning rate of 0-based step `step`: linear warmup maxLr·(step+1)/warmup (so step 0 is
 * already non-zero), then cosine from maxLr down to minLr at totalSteps.
 */
export function lrAt(step: number, s: LrSchedule): number {
  if (step < s.warmupSteps) return (s.maxLr * (step + 1)) / s.warmupSteps;
  const span = Math.max(1, s.totalSteps - s.warmupSteps);
  const progress = Math.min(1, (step - s.warmupSteps) / span);
  return s.minLr + 0.5 * (1 + Math.cos(Math.PI * progress)) * (s.maxLr - s.minLr);
}

export interface TrainStepReport {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
}

/**
 * The reference training loop's state: f32 parameters and moments, as the GPU keeps them, so
 * both round to the same storage precision after each step.
 */
export class ReferenceTrainer {
  readonly layout: ParamLayout;
  readonly params: Float32Array;
  readonly m: Float32Array;
  readonly v: Float32Array;
  /** Steps taken. */
  t = 0;

  constructor(
    readonly config: ModelConfig,
    initial: Float32Array,
    readonly adamw: Omit<AdamWOptions, 'lr'>,
    readonly schedule: LrSchedule,
  ) {
    this.layout = paramLayout(config);
    checkParams(initial, this.layout);
    this.params = initial.slice();
    this.m = new Float32Array(this.layout.totalSize);
    this.v = new Float32Array(this.layout.totalSize);
  }

  step(batch: TokenBatch): TrainStepReport {
    const { loss, grad } = gptLossAndGrad(this.params, this.config, batch, this.layout);
    const lr = lrAt(this.t, this.schedule);
    const { gradNorm } = adamwStep(this.layout, this.params, grad, this.m, this.v, this.t + 1, { ...this.adamw, lr });
    this.t++;
    return { step: this.t, loss, lr, gradNorm };
  }
}

/**
 * The building blocks, exported for one purpose: a test that checks they follow the same
 * conventions (layouts, RoPE pairing, norm statistics) as the kernels' own twins.
 */
export const gptInternals = { linear, linearBackward, normForward, normBackward, gelu, geluGrad, rope, attention, attentionBackward };

// ---- inference ----------------------------------------------------------------------------

/** Logits [T, vocab] of one sequence, recomputed from scratch (the KV cache's oracle). */
export function gptLogits(p: Floats, c: ModelConfig, tokens: ArrayLike<number>): Float64Array {
  return gptForward(p, c, tokens, 1, tokens.length).logits;
}

export interface GenerateRefOptions {
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature: number;
  topK?: number;
  topP?: number;
  seed?: number;
  /** Row index given to the sampler's counter-based uniform (the sample's index in a group). */
  row?: number;
  /** Stops after emitting this token. */
  stopToken?: number;
}

/**
 * Generates by full recomputation each step, sampling with the GPU sampler's twin
 * (sampleRef): token i is drawn with uniform(seed, step = i, row), so a GPU run with the same
 * seed should emit the same tokens (up to f32 ties: see SampleResult.margin).
 */
export function generateRef(p: Floats, c: ModelConfig, prompt: ArrayLike<number>, o: GenerateRefOptions): number[] {
  if (prompt.length < 1) throw new RangeError('generate: the prompt needs at least one token');
  if (prompt.length + o.maxNewTokens > c.contextLength) {
    throw new RangeError(`generate: prompt ${prompt.length} + ${o.maxNewTokens} new tokens exceed contextLength ${c.contextLength}`);
  }
  const seq = Array.from(prompt);
  const out: number[] = [];
  const V = c.vocabSize;
  for (let i = 0; i < o.maxNewTokens; i++) {
    const logits = gptLogits(p, c, seq);
    const last = logits.subarray((seq.length - 1) * V, seq.length * V);
    const rowLogits = new Float64Array(V * ((o.row ?? 0) + 1));
    rowLogits.set(last, (o.row ?? 0) * V);
    const opts: SampleOptions = { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed ?? 0, step: i };
    const tok = sampleRef(rowLogits, (o.row ?? 0) + 1, V, opts).tokens[o.row ?? 0];
    seq.push(tok);
    out.push(tok);
    if (tok === o.stopToken) break;
  }
  return out;
}
