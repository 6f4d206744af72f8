// `kernels` suite, in the manner of llm.c's dev/cuda: every kernel family alone, at the bench
// model's shapes (d_model 64, 4 heads, T 64, batch 8, vocab 256) and one larger, reported as
// time per call, GFLOP/s and GB/s by the napkin maths of bench/napkin.ts (also in each shader's
// header), and as a share of what this adapter's best kernel reaches in the same run: the best
// matmul's GFLOP/s for compute-bound kernels, the plain add kernel's GB/s for memory-bound ones.
// A low share says where the next performance work pays; absolute numbers only compare within
// one machine and one run.
import { AdamWKernel } from '../src/gpu/kernels/adamw.ts';
import { AttentionBackwardKernel, AttentionForwardKernel } from '../src/gpu/kernels/attention.ts';
import { AddKernel, BiasActKernel, GeluBackwardKernel } from '../src/gpu/kernels/elementwise.ts';
import { MatmulKernel, type MatmulVariant } from '../src/gpu/kernels/matmul.ts';
import { HeadNormKernel } from '../src/gpu/kernels/headnorm.ts';
import { NormKernel } from '../src/gpu/kernels/norm.ts';
import { PrefixAttentionKernel } from '../src/gpu/kernels/prefixAttention.ts';
import { RopeKernel } from '../src/gpu/kernels/rope.ts';
import { SwigluKernel } from '../src/gpu/kernels/swiglu.ts';
import { XentKernel } from '../src/gpu/kernels/xent.ts';
import { randomArray } from '../src/core/random.ts';
import { packF16Rows } from '../src/reference/f16.ts';
import type { GpuRuntime } from '../src/gpu/runtime.ts';
import { ADAMW_DEFAULTS } from '../src/core/model/optim.ts';
import type { BenchRecord, Suite } from './common.ts';
import * as N from './napkin.ts';

/** A kernel set up on its buffers: encode one call into a pass; release everything. */
interface Prepared {
  encode(pass: GPUComputePassEncoder): void;
  dispose(): void;
}

interface KernelCase {
  family: string;
  name: string;
  bound: N.Bound;
  napkin: N.Napkin;
  /** Candidate for the ceiling of its bound: the matmuls (compute) and the add kernel (memory). */
  ceiling?: boolean;
  /** The f32 case this one is the f16-weight twin of: the suite prints their time ratio. */
  twinOf?: string;
  prepare(rt: GpuRuntime): Promise<Prepared>;
}

// Each timed submission holds enough back-to-back calls to take about TARGET_MS, so launch and
// submit overheads are spread thin; the fastest of REPS such submissions is kept: on a shared
// machine (SwiftShader runs on the CPU) other work only ever adds time, so the minimum is the
// steadiest estimate of what the kernel itself costs.
const TARGET_MS = 40;
const MAX_INNER = 32;
const REPS = 3;

function buffers(rt: GpuRuntime, label: string, sizes: number[]): GPUBuffer[] {
  return sizes.map((n, i) => rt.storage(`bench.${label}.${i}`, randomArray(n, i + 1)));
}

// ---- cases ---------------------------------------------------------------------------------

/** Every matmul counts toward the compute ceiling: the best shape sets it. `variant` forces an entry point (a decode step's few rows against the tiled path). */
function matmulCase(name: string, M: number, N_: number, K: number, variant?: MatmulVariant): KernelCase {
  return {
    family: 'matmul',
    name,
    bound: 'compute',
    ceiling: !variant,
    napkin: N.matmulNapkin.count({ M, N: N_, K, batch: 1 }),
    async prepare(rt) {
      const k = await MatmulKernel.create(rt, { M, N: N_, K }, { variant });
      const [a, b, c] = buffers(rt, 'mm', [M * K, K * N_, M * N_]);
      return { encode: (p) => k.encode(p, a, b, c), dispose: () => (rt.release(a, b, c), k.dispose()) };
    },
  };
}

/** The f16-weight twin of matmulCase(name, ...): B [K, N] packed two f16 per u32 word (real values: no NaN or subnormal patterns). */
function matmulF16Case(name: string, M: number, N_: number, K: number, variant?: MatmulVariant): KernelCase {
  return {
    family: 'matmul',
    name: `${name} f16 B`,
    bound: 'compute',
    twinOf: name,
    napkin: N.matmulF16bNapkin.count({ M, N: N_, K, batch: 1 }),
    async prepare(rt) {
      const k = await MatmulKernel.create(rt, { M, N: N_, K }, { variant, f16B: true });
      const [a, c] = buffers(rt, 'mm16', [M * K, M * N_]);
      const b = rt.storage('bench.mm16.b', packF16Rows(randomArray(K * N_, 2), K, N_));
      return { encode: (p) => k.encode(p, a, b, c), dispose: () => (rt.release(a, b, c), k.dispose()) };
    },
  };
}

function attentionCases(label: string, B: number, T: number, H: number, D: number): KernelCase[] {
  const C = H * D;
  const s = { B, T, H, D };
  const sizes = [B * T * 3 * C, B * T * C, B * H * T, B * T * C, B * T * 3 * C];
  return [
    {
      family: 'attention',
      name: `forward ${label}`,
      bound: 'compute',
      napkin: N.attentionForwardNapkin.count({ ...s, C }),
      async prepare(rt) {
        const k = await AttentionForwardKernel.create(rt, s);
        const [qkv, out, lse] = buffers(rt, 'attn', sizes.slice(0, 3));
        return { encode: (p) => k.encode(p, qkv, out, lse), dispose: () => (rt.release(qkv, out, lse), k.dispose()) };
      },
    },
    {
      family: 'attention',
      name: `backward ${label}`,
      bound: 'compute',
      napkin: N.attentionBackwardNapkin.count({ ...s, C }),
      async prepare(rt) {
        const fwd = await AttentionForwardKernel.create(rt, s);
        const k = await AttentionBackwardKernel.create(rt, s);
        const [qkv, out, lse, dout, dqkv] = buffers(rt, 'attnb', sizes);
        // A real lse and out for the scores the backward recomputes.
        const enc = rt.device.createCommandEncoder();
        const pass = enc.beginComputePass();
        fwd.encode(pass, qkv, out, lse);
        pass.end();
        rt.device.queue.submit([enc.finish()]);
        fwd.dispose();
        return { encode: (p) => k.encode(p, qkv, out, lse, dout, dqkv), dispose: () => (rt.release(qkv, out, lse, dout, dqkv), k.dispose()) };
      },
    },
  ];
}

function normCases(rows: number, C: number): KernelCase[] {
  const label = `${rows}x${C}`;
  const prepare = async (rt: GpuRuntime, backward: boolean): Promise<Prepared> => {
    const k = await NormKernel.create(rt, { rows, C, kind: 'layer' });
    const [x, w, y, stats, dy, dx, grads] = buffers(rt, 'norm', [rows * C, 2 * C, rows * C, 2 * rows, rows * C, rows * C, 2 * C]);
    // Real statistics for the backward.
    const enc = rt.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    k.encodeForward(pass, x, w, y, stats);
    pass.end();
    rt.device.queue.submit([enc.finish()]);
    return {
      encode: backward ? (p) => k.encodeBackward(p, dy, x, w, stats, dx, grads) : (p) => k.encodeForward(p, x, w, y, stats),
      dispose: () => (rt.release(x, w, y, stats, dy, dx, grads), k.dispose()),
    };
  };
  return [
    { family: 'layernorm', name: `forward ${label}`, bound: 'memory', napkin: N.normForwardNapkin.count({ rows, C }), prepare: (rt) => prepare(rt, false) },
    { family: 'layernorm', name: `backward ${label}`, bound: 'memory', napkin: N.normBackwardNapkin.count({ rows, C }), prepare: (rt) => prepare(rt, true) },
  ];
}

function xentCase(rows: number, V: number): KernelCase {
  return {
    family: 'cross-entropy',
    name: `fwd+grad ${rows}x${V}`,
    bound: 'memory',
    napkin: N.xentNapkin.count({ N: rows, V }),
    async prepare(rt) {
      const k = await XentKernel.create(rt, { N: rows, V });
      k.setWeightSum(rows);
      const [logits, nll] = buffers(rt, 'xent', [rows * V, rows]);
      const targets = rt.storage(
        'bench.xent.targets',
        Uint32Array.from({ length: rows }, (_, i) => (i * 7919) % V),
      );
      const weights = rt.storage('bench.xent.weights', new Float32Array(rows).fill(1));
      // The gradient overwrites the logits, so later calls see gradients as logits: the same work.
      return { encode: (p) => k.encode(p, logits, targets, weights, nll), dispose: () => (rt.release(logits, nll, targets, weights), k.dispose()) };
    },
  };
}

function adamwCase(label: string, n: number): KernelCase {
  return {
    family: 'adamw',
    name: `${label} n=${n}`,
    bound: 'memory',
    napkin: N.adamwNapkin.count({ n }),
    async prepare(rt) {
      const k = await AdamWKernel.create(rt, { ...ADAMW_DEFAULTS, size: n, segments: [{ start: 0, end: n, decay: true }] });
      k.setStep(0, 1e-3);
      const [p, g, m] = buffers(rt, 'adamw', [n, n, n]);
      const v = rt.storage('bench.adamw.v', new Float32Array(n).fill(1e-3));
      return { encode: (pass) => k.encode(pass, p, g, m, v), dispose: () => (rt.release(p, g, m, v), k.dispose()) };
    },
  };
}

function geluCases(rows: number, C: number, backward: boolean): KernelCase[] {
  const n = rows * C;
  const out: KernelCase[] = [
    {
      family: 'gelu',
      name: `bias+gelu ${rows}x${C}`,
      bound: 'memory',
      napkin: N.biasGeluNapkin.count({ rows, C }),
      async prepare(rt) {
        const k = await BiasActKernel.create(rt, { rows, C, biasOffset: 0, activation: 'gelu' });
        const [h, w, o] = buffers(rt, 'gelu', [n, C, n]);
        return { encode: (p) => k.encode(p, h, w, o), dispose: () => (rt.release(h, w, o), k.dispose()) };
      },
    },
  ];
  if (backward) {
    out.push({
      family: 'gelu',
      name: `backward n=${n}`,
      bound: 'memory',
      napkin: N.geluBackwardNapkin.count({ n }),
      async prepare(rt) {
        const k = await GeluBackwardKernel.create(rt, { n });
        const [g, h] = buffers(rt, 'gelub', [n, n]);
        return { encode: (p) => k.encode(p, g, h), dispose: () => (rt.release(g, h), k.dispose()) };
      },
    });
  }
  return out;
}

function addCase(n: number): KernelCase {
  return {
    family: 'copy (add)',
    name: `a+b n=${n}`,
    bound: 'memory',
    ceiling: true,
    napkin: N.addNapkin.count({ n }),
    async prepare(rt) {
      const k = await AddKernel.create(rt, { n });
      const [a, b, c] = buffers(rt, 'add', [n, n, n]);
      return { encode: (p) => k.encode(p, a, b, c), dispose: () => (rt.release(a, b, c), k.dispose()) };
    },
  };
}

/** Llama's blocks: RoPE on the fused q|k|v (grouped-query), the SwiGLU gate both ways, Qwen3's per-head q/k norm. */
function llamaCases(label: string, seqs: number, T: number, H: number, KVH: number, D: number, F: number): KernelCase[] {
  const rows = seqs * T;
  const W = (H + 2 * KVH) * D;
  const swiglu = (backward: boolean): KernelCase => ({
    family: 'swiglu',
    name: `${backward ? 'backward' : 'forward'} ${rows}x${F}`,
    bound: 'memory',
    napkin: (backward ? N.swigluBackwardNapkin : N.swigluForwardNapkin).count({ rows, F }),
    async prepare(rt) {
      const k = await SwigluKernel.create(rt, { rows, F });
      const [h, out, dh] = buffers(rt, 'swiglu', [rows * 2 * F, rows * F, rows * 2 * F]);
      return {
        encode: backward ? (p) => k.encodeBackward(p, h, out, dh) : (p) => k.encodeForward(p, h, out),
        dispose: () => (rt.release(h, out, dh), k.dispose()),
      };
    },
  });
  return [
    {
      family: 'rope',
      name: `q+k ${label}`,
      bound: 'memory',
      napkin: N.ropeNapkin.count({ rows, T, H, KVH, D }),
      async prepare(rt) {
        const k = await RopeKernel.create(rt, { rows, T, H, kvH: KVH, D }, { maxPositions: T });
        const [qkv] = buffers(rt, 'rope', [rows * W]);
        // A rotation: repeated calls keep the values bounded.
        return { encode: (p) => k.encode(p, qkv), dispose: () => (rt.release(qkv), k.dispose()) };
      },
    },
    swiglu(false),
    swiglu(true),
    {
      family: 'head norm',
      name: `forward ${label}`,
      bound: 'memory',
      napkin: N.headNormForwardNapkin.count({ rows, H, KVH, D }),
      async prepare(rt) {
        const k = await HeadNormKernel.create(rt, { rows, H, kvH: KVH, D, eps: 1e-6, qOffset: 0, kOffset: D });
        const [qkv, weights, raw, stats] = buffers(rt, 'headnorm', [rows * W, 2 * D, k.rawSize, k.statsSize]);
        return { encode: (p) => k.encodeForward(p, qkv, weights, raw, stats), dispose: () => (rt.release(qkv, weights, raw, stats), k.dispose()) };
      },
    },
  ];
}

/** A GSPO group: G completions of Tc rows over one prompt prefix of P rows, forward and backward. */
function prefixAttentionCases(G: number, Tc: number, P: number, H: number, KVH: number, D: number): KernelCase[] {
  const W = (H + 2 * KVH) * D;
  const s = { G, Tc, Tp: P, H, kvH: KVH, D };
  const dims = { G, Tc, P, H, KVH, D };
  const label = `G${G} Tc${Tc} P${P} H${H}/${KVH} D${D}`;
  const prepare = async (rt: GpuRuntime, backward: boolean): Promise<Prepared> => {
    const k = await PrefixAttentionKernel.create(rt, s, { backward });
    k.setPrefixLength(P);
    const [pqkv, qkv, out, lse, dout, dqkv, dpkv] = buffers(rt, 'pattn', [P * W, G * Tc * W, G * Tc * H * D, G * H * Tc, G * Tc * H * D, G * Tc * W, P * W]);
    // A real lse and out for the scores the backward recomputes.
    const enc = rt.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    k.encodeForward(pass, pqkv, qkv, out, lse);
    pass.end();
    rt.device.queue.submit([enc.finish()]);
    return {
      encode: backward ? (p) => k.encodeBackward(p, { pqkv, qkv, out, lse, dout, dqkv, dpkv }) : (p) => k.encodeForward(p, pqkv, qkv, out, lse),
      dispose: () => (rt.release(pqkv, qkv, out, lse, dout, dqkv, dpkv), k.dispose()),
    };
  };
  return [
    {
      family: 'prefix attention',
      name: `forward ${label}`,
      bound: 'compute',
      napkin: N.prefixAttentionForwardNapkin.count(dims),
      prepare: (rt) => prepare(rt, false),
    },
    {
      family: 'prefix attention',
      name: `backward ${label}`,
      bound: 'compute',
      napkin: N.prefixAttentionBackwardNapkin.count(dims),
      prepare: (rt) => prepare(rt, true),
    },
  ];
}

/** The bench model: 2 layers, d_model 64, 4 heads, T 64, batch 8, vocab 256 (rows = 512). */
export function kernelCases(): KernelCase[] {
  const rows = 8 * 64;
  return [
    // Ceilings first, so the table reads top-down from the best this adapter does.
    matmulCase('256x256x256', 256, 256, 256),
    matmulCase('512x512x512', 512, 512, 512),
    addCase(1 << 20),
    addCase(1 << 21),
    matmulCase('qkv 512x192x64', rows, 192, 64),
    matmulCase('fc 512x256x64', rows, 256, 64),
    matmulCase('proj 512x64x256', rows, 64, 256),
    // A decode step's LM head (one row, vocab 1024): the few-row path against the tiled one it replaced.
    matmulCase('decode head 1x1024x64 rows', 1, 1024, 64, 'rows'),
    matmulCase('decode head 1x1024x64 tiled', 1, 1024, 64, 'vec4'),
    // f16 weights (inference): the same products with B in f16, and a decode step's MLP at
    // SmolLM2-135M's width (576 → 1536), where reading B is nearly all the traffic.
    matmulF16Case('512x512x512', 512, 512, 512),
    matmulF16Case('qkv 512x192x64', rows, 192, 64),
    matmulF16Case('decode head 1x1024x64 rows', 1, 1024, 64, 'rows'),
    matmulCase('decode mlp 1x1536x576 rows', 1, 1536, 576, 'rows'),
    matmulF16Case('decode mlp 1x1536x576 rows', 1, 1536, 576, 'rows'),
    ...attentionCases('B8 T64 H4 D16', 8, 64, 4, 16),
    ...attentionCases('B4 T128 H4 D32', 4, 128, 4, 32),
    ...normCases(rows, 64),
    ...normCases(2048, 256),
    xentCase(rows, 256),
    xentCase(1024, 2048),
    adamwCase('bench model', 1 << 17),
    adamwCase('larger', 1 << 20),
    ...geluCases(rows, 256, true),
    ...geluCases(2048, 1024, true),
    // The Llama / Qwen blocks at the bench model's width (grouped-query: 4 query heads, 2 k/v heads).
    ...llamaCases('B8 T64 H4/2 D16', 8, 64, 4, 2, 16, 256),
    ...prefixAttentionCases(4, 32, 128, 4, 2, 16),
  ];
}

// ---- timing --------------------------------------------------------------------------------

/** ms for `inner` back-to-back calls in one pass: GPU timestamps when the adapter has them, else submit-to-done wall time. */
async function timeCalls(rt: GpuRuntime, k: Prepared, inner: number): Promise<number> {
  const { gpuMs, wallMs } = await rt.timed((enc, ts) => {
    const timestampWrites = ts.first ? { ...ts.first, endOfPassWriteIndex: 1 } : undefined;
    const pass = enc.beginComputePass({ label: 'bench.kernels', timestampWrites });
    for (let i = 0; i < inner; i++) k.encode(pass);
    pass.end();
  });
  return gpuMs ?? wallMs;
}

/** Best ms per call: one warm-up call sizes the batch, then REPS batches. */
async function msPerCall(rt: GpuRuntime, k: Prepared): Promise<number> {
  const first = await timeCalls(rt, k, 1);
  const inner = Math.max(1, Math.min(MAX_INNER, Math.round(TARGET_MS / Math.max(first, 0.01))));
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) times.push((await timeCalls(rt, k, inner)) / inner);
  return Math.min(...times);
}

// ---- suite ---------------------------------------------------------------------------------

export const kernelsSuite: Suite = async (rt, log) => {
  const t0 = performance.now();
  const records: BenchRecord[] = [];
  const timing = rt.report.features.timestampQuery ? 'GPU timestamps' : 'submit-to-done wall time';
  log(`kernels: ${timing}; best of ${REPS} batches of back-to-back calls`);
  const measured: { c: KernelCase; ms: number }[] = [];
  for (const c of kernelCases()) {
    const record = (metric: string, value: number, unit: string) =>
      records.push({ suite: 'kernels', case: `${c.family}: ${c.name}`, engine: 'lwm-wgsl', metric, value, unit });
    let k: Prepared | null = null;
    try {
      k = await c.prepare(rt);
      const ms = await msPerCall(rt, k);
      measured.push({ c, ms });
    } catch (e) {
      log(`kernels ${c.family} ${c.name}: FAILED ${(e as Error).message}`);
      record('error', NaN, (e as Error).message.slice(0, 200));
    } finally {
      k?.dispose();
    }
  }
  // The ceilings: the best matmul (GFLOP/s) and the best add (GB/s) of this run, whatever the shape.
  const best = (bound: N.Bound, of: (x: { c: KernelCase; ms: number }) => number) =>
    Math.max(...measured.filter((m) => m.c.ceiling && m.c.bound === bound).map(of));
  const ceiling = {
    gflops: best('compute', (m) => m.c.napkin.flops / (m.ms * 1e6)),
    gbps: best('memory', (m) => m.c.napkin.bytes / (m.ms * 1e6)),
  };
  log(`kernels: ceilings on this adapter: ${ceiling.gflops.toFixed(3)} GFLOP/s (best matmul), ${ceiling.gbps.toFixed(3)} GB/s (best add)`);
  const rows: string[][] = [['family', 'case', 'bound', 'ms/call', 'GFLOP/s', 'GB/s', '% of ceiling']];
  for (const { c, ms } of measured) {
    const t = N.throughput(c.napkin, ms, c.bound, ceiling);
    const cse = `${c.family}: ${c.name}`;
    const push = (metric: string, value: number, unit: string) => records.push({ suite: 'kernels', case: cse, engine: 'lwm-wgsl', metric, value, unit });
    push('ms_per_call', ms, 'ms');
    push('gflops', t.gflops, 'GFLOP/s');
    push('gbps', t.gbps, 'GB/s');
    push(c.bound === 'compute' ? 'share_of_best_matmul' : 'share_of_best_add', t.share, 'fraction');
    rows.push([
      c.family,
      c.name,
      c.bound,
      ms.toFixed(3),
      t.gflops.toFixed(3),
      t.gbps.toFixed(3),
      `${(100 * t.share).toFixed(0)}%${c.bound === 'compute' ? ' of matmul' : ' of add'}`,
    ]);
  }
  for (const line of table(rows).split('\n')) log(line);
  for (const { c, ms } of measured) {
    const twin = c.twinOf && measured.find((m) => m.c.family === c.family && m.c.name === c.twinOf);
    if (!twin) continue;
    log(
      `kernels: ${c.family} ${c.twinOf}: f16 weights ${ms.toFixed(3)} ms vs f32 ${twin.ms.toFixed(3)} ms per call (${(ms / twin.ms).toFixed(2)}× the time; B's bytes halved)`,
    );
    records.push({ suite: 'kernels', case: `${c.family}: ${c.name}`, engine: 'lwm-wgsl', metric: 'time_vs_f32', value: ms / twin.ms, unit: 'ratio' });
  }
  log(`kernels: ${measured.length} cases in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return records;
};

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => r.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [fmt(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(fmt)].join('\n');
}
