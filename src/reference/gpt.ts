// A complete GPT on the CPU in plain TypeScript: forward, weighted cross-entropy loss, full
// backward into the flat gradient, and the training loop (AdamW and the schedule of
// src/core/model/optim.ts). It is the oracle the WebGPU model follows (20 training steps must track
// these losses within 1e-3 relative). It is assembled from the per-op twins beside this file
// (matmul, norm, elementwise, rope, attention, embedding, adamw), each the oracle of one WGSL
// kernel, op for op as the GPU model (src/model/gpt.ts) runs them; activations are f64 (the twins
// fill f64 arrays here), so finite differences over it see no f32 rounding.
//
// Parameters use the flat layout of src/core/model/params.ts (Float32Array as on the GPU, or
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
// Llama-family blocks (plan.ts) change the pieces, not the order: grouped-query heads in qkv,
// biases only where the plan has them, an RMSNorm over each q and k head before RoPE (Qwen3),
// and silu(gate)·up in place of GELU.
//   loss = Σ w_r · CE_r / Σ w_r   (0 when Σ w_r = 0; weight-0 rows are skipped entirely, so
//          their targets may be anything, e.g. padding)
import type { ModelConfig } from '../core/model/config.ts';
import type { AdamWConfig, LrSchedule } from '../core/model/optim.ts';
import { lrAt } from '../core/model/optim.ts';
import { paramLayout, tensorSegments, type BlockParams, type ParamLayout } from '../core/model/params.ts';
import { blockPlan, type BlockPlan } from '../core/model/plan.ts';
import { adamwStepRef, buildDecayMask } from './adamw.ts';
import { attentionBackwardRef, attentionForwardRef } from './attention.ts';
import { addRef, biasAddRef, biasGradRef, geluBackwardRef, geluForwardRef } from './elementwise.ts';
import { embeddingBackwardRef, embeddingForwardRef } from './embedding.ts';
import { matmulRef } from './matmul.ts';
import { normBackwardRef, normForwardRef, type NormShape } from './norm.ts';
import { ropeRef } from './rope.ts';
import { headNormBackwardRef, headNormForwardRef, type HeadNormShape } from './headnorm.ts';
import { swigluBackwardRef, swigluForwardRef } from './swiglu.ts';
import { sampleRef, type SampleOptions } from './sampling.ts';

type Floats = Float32Array | Float64Array;
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
  /** [B·T] per-token loss weight ≥ 0 (docs/method.md §4's mask); all 1 when absent. */
  weights?: ArrayLike<number>;
  /** The gradient's normaliser: a step minimises Σ w·CE / lossNorm. Default: the batch's target tokens (weight > 0). */
  lossNorm?: number;
}

// ---- ops on f64 activations, from the twins ------------------------------------------------

/** y = x·W (+ b) with W [nIn, nOut] at w and b at bias (the matmul and bias-add twins). */
function linear(x: F64, rows: number, nIn: number, nOut: number, p: F64, w: number, bias?: number): F64 {
  const y = matmulRef(x, p, new Float64Array(rows * nOut), { M: rows, N: nOut, K: nIn, offsetB: w });
  return bias === undefined ? y : biasAddRef(y, p, rows, nOut, bias, y);
}

/** Backward of linear: dW (+ db) accumulate into grad; returns dx = dy·Wᵀ. */
function linearBackward(dy: F64, x: F64, rows: number, nIn: number, nOut: number, p: F64, w: number, bias: number | undefined, grad: F64): F64 {
  matmulRef(x, dy, grad, { M: nIn, N: nOut, K: rows, transA: true, offsetC: w, beta: 1 });
  if (bias !== undefined) biasGradRef(dy, rows, nOut).forEach((g, i) => (grad[bias + i] += g));
  return matmulRef(dy, p, new Float64Array(rows * nIn), { M: rows, N: nIn, K: nOut, transB: true, offsetB: w });
}

interface NormActs {
  y: F64;
  stats: F64;
}

/** The norm twin's shape for a norm over d of `rows` rows with gamma at w (and beta at b). */
function normShape(c: ModelConfig, rows: number, w: { offset: number }, b?: { offset: number }): NormShape {
  return { rows, C: c.dModel, kind: blockPlan(c).norm, eps: c.normEps, gammaOffset: w.offset, betaOffset: b?.offset ?? 0 };
}

function normForward(x: F64, p: F64, s: NormShape): NormActs {
  return normForwardRef(x, p, s, { y: new Float64Array(s.rows * s.C), stats: new Float64Array(2 * s.rows) });
}

/** dx of the norm; dgamma (and dbeta for LayerNorm) accumulate into grad. */
function normBackward(dy: F64, x: F64, a: NormActs, p: F64, s: NormShape, grad: F64): F64 {
  const { dx, dgamma, dbeta } = normBackwardRef(dy, x, p, a.stats, s, new Float64Array(s.rows * s.C));
  dgamma.forEach((g, i) => (grad[s.gammaOffset! + i] += g));
  if (s.kind === 'layer') dbeta.forEach((g, i) => (grad[s.betaOffset! + i] += g));
  return dx;
}

// ---- one block -------------------------------------------------------------------------------

/** What a block's backward needs from its forward. */
interface BlockActivations {
  xIn: F64;
  ln1: NormActs;
  /** The q/k head norm's saved inputs and rstd (Qwen3). */
  headNorm?: { raw: F64; stats: F64 };
  qkv: F64; // after RoPE
  att: F64;
  xMid: F64;
  ln2: NormActs;
  fc: F64; // before GELU (SwiGLU: [gate | up])
  act: F64; // after GELU (SwiGLU: silu(gate)·up)
}

/** Shapes shared by every block of one forward: B sequences of T tokens from position `pos`. */
interface BlockDims {
  c: ModelConfig;
  plan: BlockPlan;
  B: number;
  T: number;
  rows: number;
  pos: number;
}

const ropeShape = ({ c, plan, rows, T }: BlockDims) => ({
  rows,
  T,
  H: plan.heads,
  kvH: plan.kvHeads,
  D: plan.headSize,
  base: c.ropeBase,
  freqs: plan.ropeFreqs,
});
const attnShape = ({ plan, B, T }: BlockDims) => ({ B, T, H: plan.heads, kvH: plan.kvHeads, D: plan.headSize });
const headNormShape = ({ c, plan, rows }: BlockDims, bp: BlockParams): HeadNormShape => ({
  rows,
  H: plan.heads,
  kvH: plan.kvHeads,
  D: plan.headSize,
  eps: c.normEps,
  qOffset: bp.qNorm!.offset,
  kOffset: bp.kNorm!.offset,
});

/**
 * x → x + attn(norm1(x)) → + mlp(norm2(·)): the ops of the config's BlockPlan (src/core/model/plan.ts),
 * in the order the GPU block (src/model/block.ts) encodes them.
 */
function blockForward(xIn: F64, bp: BlockParams, p: F64, g: BlockDims): BlockActivations {
  const { c, plan, rows } = g;
  const { C: d, F: f } = plan;
  const ln1 = normForward(xIn, p, normShape(c, rows, bp.ln1Weight, bp.ln1Bias));
  const qkv = linear(ln1.y, rows, d, plan.qkvDim, p, bp.attnWeight.offset, bp.attnBias?.offset);
  const headNorm = plan.qkNorm ? headNormForwardRef(qkv, p, headNormShape(g, bp)) : undefined;
  if (plan.rope) ropeRef(qkv, ropeShape(g), g.pos, 1);
  const att = attentionForwardRef(qkv, attnShape(g)).out;
  const proj = linear(att, rows, plan.qDim, d, p, bp.attnProjWeight.offset, bp.attnProjBias?.offset);
  const xMid = addRef(xIn, proj, new Float64Array(rows * d));
  const ln2 = normForward(xMid, p, normShape(c, rows, bp.ln2Weight, bp.ln2Bias));
  const fc = linear(ln2.y, rows, d, plan.upDim, p, bp.fcWeight.offset, bp.fcBias?.offset);
  const act = plan.mlp === 'swiglu' ? swigluForwardRef(fc, { rows, F: f }, new Float64Array(rows * f)) : geluForwardRef(fc, new Float64Array(fc.length));
  return { xIn, ln1, headNorm, qkv, att, xMid, ln2, fc, act };
}

/** The block's output x_{l+1} = xMid + mlp(ln2(xMid)). */
function blockOutput(a: BlockActivations, bp: BlockParams, p: F64, g: BlockDims): F64 {
  const mlp = linear(a.act, g.rows, g.plan.F, g.plan.C, p, bp.mlpProjWeight.offset, bp.mlpProjBias?.offset);
  return addRef(a.xMid, mlp, mlp);
}

/** From d x_{l+1} to d x_l; every parameter gradient of the block accumulates into grad. */
function blockBackward(dx: F64, a: BlockActivations, bp: BlockParams, p: F64, g: BlockDims, grad: F64): F64 {
  const { c, plan, rows } = g;
  const { C: d, F: f } = plan;
  // MLP branch: x = xMid + mlp(ln2(xMid)).
  const dAct = linearBackward(dx, a.act, rows, f, d, p, bp.mlpProjWeight.offset, bp.mlpProjBias?.offset, grad);
  const dFc = plan.mlp === 'swiglu' ? swigluBackwardRef(a.fc, dAct, { rows, F: f }, new Float64Array(rows * 2 * f)) : geluBackwardRef(a.fc, dAct, dAct);
  const dLn2 = linearBackward(dFc, a.ln2.y, rows, d, plan.upDim, p, bp.fcWeight.offset, bp.fcBias?.offset, grad);
  const dMid = normBackward(dLn2, a.xMid, a.ln2, p, normShape(c, rows, bp.ln2Weight, bp.ln2Bias), grad);
  addRef(dMid, dx, dMid);
  // Attention branch: xMid = xIn + proj(attn(ln1(xIn))).
  const dAtt = linearBackward(dMid, a.att, rows, plan.qDim, d, p, bp.attnProjWeight.offset, bp.attnProjBias?.offset, grad);
  const dQkv = attentionBackwardRef(a.qkv, dAtt, attnShape(g));
  if (plan.rope) ropeRef(dQkv, ropeShape(g), g.pos, -1);
  if (a.headNorm) {
    const hs = headNormShape(g, bp);
    const dGain = headNormBackwardRef(dQkv, a.headNorm.raw, a.headNorm.stats, p, hs);
    for (let i = 0; i < hs.D; i++) {
      grad[hs.qOffset + i] += dGain[i];
      grad[hs.kOffset + i] += dGain[hs.D + i];
    }
  }
  const dLn1 = linearBackward(dQkv, a.ln1.y, rows, d, plan.qkvDim, p, bp.attnWeight.offset, bp.attnBias?.offset, grad);
  const dIn = normBackward(dLn1, a.xIn, a.ln1, p, normShape(c, rows, bp.ln1Weight, bp.ln1Bias), grad);
  return addRef(dIn, dMid, dIn);
}

// ---- the model ----------------------------------------------------------------------------

export interface ForwardResult {
  /** [B·T, vocab] */
  logits: Float64Array;
  blocks: BlockActivations[];
  xFinal: Float64Array;
  lnF: NormActs;
  layout: ParamLayout;
  /** The parameters as f64 (the input itself when it already was). */
  params: Float64Array;
}

function checkParams(p: Floats, layout: ParamLayout) {
  if (p.length !== layout.totalSize) throw new RangeError(`gpt: params hold ${p.length} elements, the layout needs ${layout.totalSize}`);
}

function checkInputs(c: ModelConfig, inputs: ArrayLike<number>, rows: number, T: number, positionOffset: number) {
  if (inputs.length !== rows) throw new RangeError(`gpt: ${inputs.length} input tokens for B·T = ${rows}`);
  if (positionOffset + T > c.contextLength) throw new RangeError(`gpt: positions up to ${positionOffset + T} exceed contextLength ${c.contextLength}`);
  for (let r = 0; r < rows; r++) {
    const tok = inputs[r];
    if (!Number.isInteger(tok) || tok < 0 || tok >= c.vocabSize)
      throw new RangeError(`gpt: input token ${tok} at row ${r} is outside the vocabulary (${c.vocabSize})`);
  }
}

/** The embedding twin's shape (wpe read from position positionOffset on). */
function embeddingShape(c: ModelConfig, layout: ParamLayout, rows: number, T: number, positionOffset: number) {
  const learnedPositions = layout.wpe !== undefined;
  const wpeOffset = learnedPositions ? layout.wpe!.offset + positionOffset * c.dModel : 0;
  return { rows, C: c.dModel, T, vocab: c.vocabSize, learnedPositions, wteOffset: layout.wte.offset, wpeOffset };
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
  // One f64 copy keeps every loop below on a single array type (V8 optimizes those best).
  const p = params instanceof Float64Array ? params : Float64Array.from(params);
  const rows = B * T;
  checkInputs(c, inputs, rows, T, positionOffset);
  const g: BlockDims = { c, plan: blockPlan(c), B, T, rows, pos: positionOffset };
  let x: F64 = embeddingForwardRef(inputs, p, embeddingShape(c, layout, rows, T, positionOffset), new Float64Array(rows * c.dModel));
  const blocks: BlockActivations[] = [];
  for (const bp of layout.blocks) {
    const a = blockForward(x, bp, p, g);
    blocks.push(a);
    x = blockOutput(a, bp, p, g);
  }
  const lnF = normForward(x, p, normShape(c, rows, layout.lnFWeight, layout.lnFBias));
  const head = (layout.lmHead ?? layout.wte).offset;
  const logits = matmulRef(lnF.y, p, new Float64Array(rows * c.vocabSize), { M: rows, N: c.vocabSize, K: c.dModel, transB: true, offsetB: head });
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

/** Forward, loss and the full backward pass (the GPU model's backward, op for op). */
export function gptLossAndGrad(params: Floats, c: ModelConfig, batch: TokenBatch, layout: ParamLayout = paramLayout(c)): LossAndGrad {
  const { B, T } = batch;
  const fw = gptForward(params, c, batch.inputs, B, T, 0, layout);
  const p = fw.params;
  const ce = weightedCrossEntropy(fw.logits, batch, c.vocabSize);
  const grad = new Float64Array(layout.totalSize);
  const d = c.dModel;
  const V = c.vocabSize;
  const rows = B * T;
  const g: BlockDims = { c, plan: blockPlan(c), B, T, rows, pos: 0 };
  // logits = lnF·Eᵀ: dlnF = dlogits·E, dE += dlogitsᵀ·lnF (rows with weight 0 have dlogits 0).
  const head = (layout.lmHead ?? layout.wte).offset;
  const dLnF = matmulRef(ce.dlogits, p, new Float64Array(rows * d), { M: rows, N: d, K: V, offsetB: head });
  matmulRef(ce.dlogits, fw.lnF.y, grad, { M: V, N: d, K: rows, transA: true, offsetC: head, beta: 1 });
  let dx = normBackward(dLnF, fw.xFinal, fw.lnF, p, normShape(c, rows, layout.lnFWeight, layout.lnFBias), grad);
  for (let l = c.layers - 1; l >= 0; l--) dx = blockBackward(dx, fw.blocks[l], layout.blocks[l], p, g, grad);
  embeddingBackwardRef(batch.inputs, dx, grad, embeddingShape(c, layout, rows, T, 0));
  return { ...ce, grad };
}

// ---- training loop ------------------------------------------------------------------------

export interface TrainStepReport {
  step: number;
  loss: number;
  lr: number;
  gradNorm: number;
}

/**
 * The reference training loop's state: f32 parameters and moments, as the GPU keeps them, so
 * both round to the same storage precision after each step. Steps with the AdamW kernel's twin
 * under the settings and schedule of src/core/model/optim.ts.
 */
export class ReferenceTrainer {
  readonly layout: ParamLayout;
  readonly params: Float32Array;
  readonly m: Float32Array;
  readonly v: Float32Array;
  private readonly decayMask: Uint32Array;
  /** Steps taken. */
  t = 0;

  constructor(
    readonly config: ModelConfig,
    initial: Float32Array,
    readonly adamw: AdamWConfig,
    readonly schedule: LrSchedule,
  ) {
    this.layout = paramLayout(config);
    checkParams(initial, this.layout);
    this.params = initial.slice();
    this.m = new Float32Array(this.layout.totalSize);
    this.v = new Float32Array(this.layout.totalSize);
    this.decayMask = buildDecayMask(tensorSegments(this.layout), this.layout.totalSize);
  }

  step(batch: TokenBatch): TrainStepReport {
    const { loss, grad } = gptLossAndGrad(this.params, this.config, batch, this.layout);
    const lr = lrAt(this.t, this.schedule);
    const { norm } = adamwStepRef(this.params, grad, this.m, this.v, this.decayMask, this.adamw, this.t, lr);
    this.t++;
    return { step: this.t, loss, lr, gradNorm: norm };
  }
}

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
