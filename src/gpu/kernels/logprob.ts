// Launcher for shaders/logprob.wgsl: log-probabilities of target tokens under logits [N, V]
// (for GSPO's logp_new/logp_old and for evaluation), and the gradient back into the logits.
import code from '../../../shaders/logprob.wgsl?raw';
import { checkLogprobShape } from '../../reference/logprob.ts';
import type { BufferBinding, GpuRuntime } from '../runtime.ts';
import { wgsl } from '../shaders.ts';
import { BindCache, bindSparse } from './attention.ts';

export const LOGPROB_SHADER = wgsl('logprob.wgsl', code);

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
  private readonly fwdBinds = new BindCache();
  private readonly bwdBinds = new BindCache();
  private constructor(
    private readonly rt: GpuRuntime,
    readonly shape: Required<LogprobShape>,
    private readonly fwd: GPUComputePipeline,
    private readonly bwd: GPUComputePipeline,
    private readonly params: GPUBuffer,
  ) {}

  static async create(rt: GpuRuntime, shape: LogprobShape): Promise<LogprobKernel> {
    const s = { temperature: 1, ...shape };
    checkLogprobShape(s.N, s.V, s.temperature);
    const lim = rt.report.limits.maxComputeWorkgroupsPerDimension;
    if (s.N > lim) throw new RangeError(`logprob: ${s.N} rows exceed ${lim} workgroups per dimension`);
    const [fwd, bwd] = await Promise.all([rt.pipeline(LOGPROB_SHADER, 'logprob_forward'), rt.pipeline(LOGPROB_SHADER, 'logprob_backward')]);
    const u = new ArrayBuffer(16);
    new Uint32Array(u).set([s.N, s.V]);
    new Float32Array(u, 8, 1)[0] = 1 / s.temperature;
    const params = rt.uniform('logprob.params', new Uint8Array(u));
    return new LogprobKernel(rt, s, fwd, bwd, params);
  }

  encode(pass: GPUComputePassEncoder, logits: BufferBinding, targets: BufferBinding, logp: BufferBinding, lse: BufferBinding): void {
    const group = this.fwdBinds.get([logits, targets, logp, lse], () =>
      bindSparse(this.rt, this.fwd, [[0, this.params], [1, logits], [2, targets], [3, logp], [4, lse]], 'logprob.forward'),
    );
    pass.setPipeline(this.fwd);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(this.shape.N);
  }

  encodeBackward(pass: GPUComputePassEncoder, logits: BufferBinding, targets: BufferBinding, lse: BufferBinding, g: BufferBinding, dlogits: BufferBinding): void {
    const group = this.bwdBinds.get([logits, targets, lse, g, dlogits], () =>
      bindSparse(this.rt, this.bwd, [[0, this.params], [1, logits], [2, targets], [4, lse], [5, g], [6, dlogits]], 'logprob.backward'),
    );
    pass.setPipeline(this.bwd);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.ceil(this.shape.V / 256), this.shape.N);
  }

  dispose(): void {
    this.rt.release(this.params);
    this.fwdBinds.clear();
    this.bwdBinds.clear();
  }
}
