// The bench GPT written with @tensorflow/tfjs-core ops: the peer our training step is measured
// against. It is the network of src/reference/gpt.ts (pre-norm GPT-2 block, learned positions,
// LayerNorm, fused q|k|v, causal attention, GELU tanh form, tied output head, softmax
// cross-entropy) and starts from the same flat initParams weights, so its first loss on a
// batch equals ours and the two loss curves can be compared in the log.
//
// Optimizer: tf.train.adam (bias-corrected Adam, same β1, β2, ε as our ADAMW_DEFAULTS) plus the
// two things AdamW adds in our engine, written as tf ops so the peer does the same work per
// step: global gradient-norm clipping (one reduction over every gradient, no read-back) and
// decoupled weight decay w ← w·(1 − lr·wd) on the matrices only (not embeddings, norms, biases).
import type * as tfjs from '@tensorflow/tfjs-core';
import type { ModelConfig } from '../src/core/model/config.ts';
import { headSize } from '../src/core/model/config.ts';
import { paramLayout, type ParamLayout } from '../src/core/model/params.ts';
import { ADAMW_DEFAULTS } from '../src/core/model/optim.ts';

type Tf = typeof tfjs;
type T2 = tfjs.Tensor2D;

const GELU_C = Math.sqrt(2 / Math.PI);

let instances = 0;

export class TfjsGpt {
  private readonly vars = new Map<string, tfjs.Variable>();
  private readonly decayed: tfjs.Variable[] = [];
  private readonly optimizer: tfjs.AdamOptimizer;
  private readonly layout: ParamLayout;
  /** Additive causal mask [T, T]: 0 on and below the diagonal, −1e9 above. */
  private readonly mask: tfjs.Tensor2D;

  constructor(
    private readonly tf: Tf,
    readonly config: ModelConfig,
    flatParams: Float32Array,
    readonly T: number,
    private readonly lr: number,
  ) {
    this.layout = paramLayout(config);
    // Variable names are global to the tfjs engine; a per-instance prefix lets a second
    // backend's model coexist with the first until it is disposed.
    const prefix = `gpt${instances++}/`;
    for (const t of this.layout.tensors) {
      const init = tf.tensor(flatParams.subarray(t.offset, t.offset + t.size), t.shape);
      const v = tf.variable(init, true, prefix + t.name);
      init.dispose(); // the variable holds its own reference to the data
      this.vars.set(t.name, v);
      if (t.decay) this.decayed.push(v);
    }
    const m = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) m[i * T + j] = -1e9;
    this.mask = tf.tensor2d(m, [T, T]);
    this.optimizer = tf.train.adam(lr, ADAMW_DEFAULTS.beta1, ADAMW_DEFAULTS.beta2, ADAMW_DEFAULTS.eps);
  }

  private p(name: string): tfjs.Variable {
    const v = this.vars.get(name);
    if (!v) throw new Error(`tfjs-gpt: no parameter ${name}`);
    return v;
  }

  private layerNorm(x: T2, prefix: string): T2 {
    const tf = this.tf;
    const { mean, variance } = tf.moments(x, -1, true);
    const xhat = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, this.config.normEps)));
    return tf.add(tf.mul(xhat, this.p(`${prefix}.weight`)), this.p(`${prefix}.bias`)) as T2;
  }

  private linear(x: T2, prefix: string): T2 {
    const tf = this.tf;
    return tf.add(tf.matMul(x, this.p(`${prefix}.weight`) as tfjs.Tensor as T2), this.p(`${prefix}.bias`)) as T2;
  }

  private gelu(x: T2): T2 {
    const tf = this.tf;
    const inner = tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), GELU_C);
    return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1)) as T2;
  }

  /** Causal multi-head attention on q|k|v rows [B·T, 3C] → [B·T, C]. */
  private attention(qkv: T2, B: number): T2 {
    const tf = this.tf;
    const { heads: H, dModel: C } = this.config;
    const D = headSize(this.config);
    const T = this.T;
    const [q, k, v] = tf.split(qkv, 3, 1).map((t) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]) as tfjs.Tensor4D);
    const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(D)), this.mask);
    const out = tf.matMul(tf.softmax(scores), v);
    return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, C]);
  }

  /**
   * Rows of wte for the token ids. gather's own gradient is UnsortedSegmentSum, which the WASM
   * backend lacks; there the gradient is a ScatterNd (which sums duplicate ids) instead, the same
   * scatter-add, so the backend still does O(tokens·d) work for it rather than a one-hot matmul.
   */
  private embed(wte: T2, ids: tfjs.Tensor1D): T2 {
    const tf = this.tf;
    if (tf.getKernel('UnsortedSegmentSum', tf.getBackend())) return tf.gather(wte, ids);
    // customGrad's signature types every argument as Tensor | GradSaveFunc; the order is fixed.
    const lookup = tf.customGrad((...args: (tfjs.Tensor | tfjs.GradSaveFunc)[]) => {
      const [w, i, save] = args as [tfjs.Tensor, tfjs.Tensor, tfjs.GradSaveFunc];
      save([i]);
      return {
        value: tf.gather(w, i),
        gradFunc: (dy: tfjs.Tensor, saved: tfjs.Tensor[]) => [tf.scatterND(tf.expandDims(saved[0], 1), dy, w.shape), tf.zerosLike(saved[0])],
      };
    });
    return lookup(wte, ids) as T2;
  }

  private loss(inputs: tfjs.Tensor1D, labels: T2, B: number): tfjs.Scalar {
    const tf = this.tf;
    const c = this.config;
    const T = this.T;
    const wte = this.p('wte') as tfjs.Tensor as T2;
    const wpe = tf.slice(this.p('wpe'), [0, 0], [T, c.dModel]);
    let x = tf.reshape(tf.add(tf.reshape(this.embed(wte, inputs), [B, T, c.dModel]), wpe), [B * T, c.dModel]) as T2;
    for (let l = 0; l < c.layers; l++) {
      const h = `h.${l}.`;
      const att = this.attention(this.linear(this.layerNorm(x, h + 'ln_1'), h + 'attn.c_attn'), B);
      x = tf.add(x, this.linear(att, h + 'attn.c_proj'));
      const mlp = this.linear(this.gelu(this.linear(this.layerNorm(x, h + 'ln_2'), h + 'mlp.c_fc')), h + 'mlp.c_proj');
      x = tf.add(x, mlp);
    }
    const logits = tf.matMul(this.layerNorm(x, 'ln_f'), wte, false, true);
    // Its own gradient (softmax − labels) is a customGrad, the cheapest path tfjs offers.
    return tf.losses.softmaxCrossEntropy(labels, logits) as tfjs.Scalar;
  }

  /**
   * One training step: forward, backward, clip, decay, Adam. Returns the loss (before the
   * update) as a tensor still on the backend; the caller reads it back, as a logging loop does.
   */
  step(inputs: ArrayLike<number>, targets: ArrayLike<number>, B: number): tfjs.Scalar {
    const tf = this.tf;
    const V = this.config.vocabSize;
    return tf.tidy(() => {
      const ids = tf.tensor1d(Int32Array.from(inputs), 'int32');
      const labels = tf.oneHot(tf.tensor1d(Int32Array.from(targets), 'int32'), V) as T2;
      const { value, grads } = tf.variableGrads(() => this.loss(ids, labels, B), [...this.vars.values()]);
      const names = Object.keys(grads);
      const norm = tf.sqrt(this.sumAll(names.map((n) => tf.sum(tf.square(grads[n])))));
      const scale = tf.minimum(1, tf.div(ADAMW_DEFAULTS.maxGradNorm, tf.add(norm, 1e-6)));
      for (const v of this.decayed) v.assign(tf.mul(v, 1 - this.lr * ADAMW_DEFAULTS.weightDecay));
      this.optimizer.applyGradients(names.map((name) => ({ name, tensor: tf.mul(grads[name], scale) })));
      return value;
    });
  }

  /**
   * Σ of many scalars by addN over groups of 4: tfjs-webgpu compiles one addN into a shader with
   * a storage binding per input, and one over all 28 gradients exceeds the binding limit (the
   * pipeline is invalid and the step silently computes garbage).
   */
  private sumAll(xs: tfjs.Tensor[]): tfjs.Tensor {
    const tf = this.tf;
    while (xs.length > 1) {
      const next: tfjs.Tensor[] = [];
      for (let i = 0; i < xs.length; i += 4) next.push(xs.length - i === 1 ? xs[i] : tf.addN(xs.slice(i, i + 4)));
      xs = next;
    }
    return xs[0];
  }

  /** Loss and per-tensor gradients without an update, for checking against the reference. */
  async lossAndGrads(inputs: ArrayLike<number>, targets: ArrayLike<number>, B: number): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
    const tf = this.tf;
    const { value, grads } = tf.tidy(() => {
      const ids = tf.tensor1d(Int32Array.from(inputs), 'int32');
      const labels = tf.oneHot(tf.tensor1d(Int32Array.from(targets), 'int32'), this.config.vocabSize) as T2;
      return tf.variableGrads(() => this.loss(ids, labels, B), [...this.vars.values()]);
    });
    const out = new Map<string, Float32Array>();
    for (const [name, v] of this.vars) out.set(name, (await grads[v.name].data()) as Float32Array);
    const loss = (await value.data())[0];
    tf.dispose([value, ...Object.values(grads)]);
    return { loss, grads: out };
  }

  dispose(): void {
    this.optimizer.dispose();
    for (const v of this.vars.values()) v.dispose();
    this.mask.dispose();
  }
}
