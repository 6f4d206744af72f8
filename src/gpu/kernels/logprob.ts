// Launcher for shaders/logprob.wgsl: log-probabilities of target tokens under logits [N, V]
// (for GSPO's logp_new/logp_old and for evaluation), and the gradient back into the logits.
import code from '../../../shaders/logprob.wgsl?raw';
import { checkLogprobShape } from '../../reference/logprob.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindGroupCache, checkGridFits, ParamWords } from './common.ts';

const LOGPROB_SHADER = wgsl('logprob.wgsl', code);

export interface LogprobShape {
  N: number;
  V: number;
  /** default 1; logits are divided by it */
  temperature?: number;
}

/**
 * encode(pass, logits [N,V], targets u32 [N], logp [N], lse [N]) overwrites logp and lse.
 * encodeBackward(pass, logits, targets, lse, g [N], dlogits [N,V]) overwrites dlogits with
 * g[r] · d logp[r] / d logits[r].
 */
export class LogprobKernel {
  private readonly binds: BindGroupCache;
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<LogprobShape>,
    private readonly fwd: GPUComputePipeline,
    private readonly bwd: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {
    this.binds = new BindGroupCache(rt, 'logprob');
  }

  static async create(rt: GpuRuntime, shape: LogprobShape): Promise<LogprobKernel> {
    const s = { temperature: 1, ...shape };
    checkLogprobShape(s.N, s.V, s.temperature);
    checkGridFits(rt, `logprob (${s.N} rows)`, [s.N]);
    const [fwd, bwd] = await Promise.all([rt.pipeline(LOGPROB_SHADER, 'logprob_forward'), rt.pipeline(LOGPROB_SHADER, 'logprob_backward')]);
    const w = new ParamWords(4);
    w.u32.set([s.N, s.V]);
    w.f32[2] = 1 / s.temperature;
    const params = rt.uniform('logprob.params', w.u32);
    return new LogprobKernel(rt, s, fwd, bwd, params);
  }

  encode(pass: GPUComputePassEncoder, logits: BufferBinding, targets: BufferBinding, logp: BufferBinding, lse: BufferBinding): void {
    this.binds.dispatch(pass, this.fwd, [this.params, logits, targets, logp, lse], [this.shape.N]);
  }

  encodeBackward(
    pass: GPUComputePassEncoder,
    logits: BufferBinding,
    targets: BufferBinding,
    lse: BufferBinding,
    g: BufferBinding,
    dlogits: BufferBinding,
  ): void {
    const bindings = { 0: this.params, 1: logits, 2: targets, 4: lse, 5: g, 6: dlogits };
    this.binds.dispatch(pass, this.bwd, bindings, [Math.ceil(this.shape.V / 256), this.shape.N]);
  }

  dispose(): void {
    this.rt.release(this.params);
    this.binds.clear();
  }
}
