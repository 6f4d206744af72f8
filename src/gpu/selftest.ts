// The in-page self-test: runs kernel checks against their reference twins on the user's GPU
// and measures matmul throughput. Shown in the System view; also run by `lwm gpu`.
import { matmulExtents, matmulRef, type MatmulShape } from '../reference/matmul.ts';
import { matmul, MatmulKernel } from './kernels/matmul.ts';
import type { GpuRuntime } from './runtime.ts';
import { randomArray } from '../core/random.ts';
import { maxAbsDiff } from './numeric.ts';

export interface SelfTestResult {
  name: string;
  pass: boolean;
  detail: string;
  ms: number;
  /** Throughput checks report GFLOP/s. */
  gflops?: number;
}

export interface SelfTestCheck {
  name: string;
  run(rt: GpuRuntime): Promise<Omit<SelfTestResult, 'name' | 'ms'>>;
}

function matmulCheck(name: string, shape: MatmulShape, seed: number): SelfTestCheck {
  return {
    name,
    async run(rt) {
      const ext = matmulExtents(shape);
      const a = randomArray(ext.a, seed);
      const b = randomArray(ext.b, seed + 1);
      const got = await matmul(rt, a, b, shape);
      const want = matmulRef(a, b, new Float32Array(ext.c), shape);
      const { max } = maxAbsDiff(got, want);
      const tol = 1e-4 * Math.sqrt(shape.K);
      return { pass: max <= tol, detail: `max |error| ${max.toExponential(2)} (tolerance ${tol.toExponential(1)})` };
    },
  };
}

/** Times `reps` back-to-back n³ products in one submission. */
async function matmulThroughput(rt: GpuRuntime, n: number, reps = 4): Promise<{ gflops: number; ms: number; timer: 'gpu' | 'wall' }> {
  const shape = { M: n, N: n, K: n };
  const kernel = await MatmulKernel.create(rt, shape);
  const a = rt.storage('selftest.a', randomArray(n * n, 1));
  const b = rt.storage('selftest.b', randomArray(n * n, 2));
  const c = rt.storage('selftest.c', n * n * 4);
  try {
    const once = () =>
      rt.timed((enc, ts) => {
        const pass = enc.beginComputePass({ timestampWrites: ts.first && { ...ts.first, endOfPassWriteIndex: 1 } });
        for (let i = 0; i < reps; i++) kernel.encode(pass, a, b, c);
        pass.end();
      });
    await once(); // warm-up: first dispatch pays for pipeline setup in some drivers
    const t = await once();
    const ms = t.gpuMs ?? t.wallMs;
    return { gflops: (kernel.flops() * reps) / (ms * 1e6), ms, timer: t.gpuMs != null ? 'gpu' : 'wall' };
  } finally {
    rt.release(a, b, c);
    kernel.dispose();
  }
}

const SELF_TESTS: SelfTestCheck[] = [
  matmulCheck('matmul A·B 17×33×65 (bounds checks)', { M: 17, N: 33, K: 65 }, 1),
  matmulCheck('matmul A·Bᵀ 64×64×64 (vec4 loads)', { M: 64, N: 64, K: 64, transB: true }, 2),
  matmulCheck('matmul Aᵀ·B batched 3×20×36×44', { M: 20, N: 36, K: 44, batch: 3, transA: true }, 3),
  {
    name: 'matmul throughput 256³',
    async run(rt) {
      const r = await matmulThroughput(rt, 256);
      return { pass: Number.isFinite(r.gflops) && r.gflops > 0, detail: `${r.gflops.toFixed(2)} GFLOP/s (${r.timer} timer)`, gflops: r.gflops };
    },
  },
];

/** Runs every check, reporting each as it finishes. A check that throws fails with its message. */
export async function runSelfTest(rt: GpuRuntime, onResult?: (r: SelfTestResult) => void, checks = SELF_TESTS): Promise<SelfTestResult[]> {
  const results: SelfTestResult[] = [];
  for (const check of checks) {
    const t0 = performance.now();
    let r: SelfTestResult;
    try {
      const out = await check.run(rt);
      r = { name: check.name, ms: performance.now() - t0, ...out };
    } catch (e) {
      r = { name: check.name, pass: false, detail: (e as Error).message, ms: performance.now() - t0 };
    }
    results.push(r);
    onResult?.(r);
  }
  return results;
}
