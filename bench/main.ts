// The in-browser half of `npm run bench`: suites that run in headless Chromium on the page's
// WebGPU adapter, each measuring our kernels beside a peer engine in the same run. Results go
// back to scripts/bench.mjs, which prints the table and writes JSON lines.
import { GpuRuntime } from '../src/gpu/runtime.ts';
import { MatmulKernel } from '../src/gpu/kernels/matmul.ts';
import { randomArray } from '../src/core/random.ts';
import { timeIt, type BenchRecord, type Suite } from './common.ts';
import { generateSuite, rolloutSuite } from './generate.ts';
import { kernelsSuite } from './kernels.ts';
import { llmSuite } from './llm.ts';
import { matmulOnnxModel } from './onnx-matmul.ts';
import { trainSuite } from './train.ts';

export type { BenchRecord };

const logEl = document.getElementById('log')!;
const log = (s: string) => {
  logEl.textContent += `\n${s}`;
  console.log(s);
};

// The page runs on the repository's dev server while the tree may be edited under it; without an
// accepting module, a saved source file makes Vite reload the page and the run's results are
// lost. Accepting keeps the code loaded at the start running, and the log says it happened.
if (import.meta.hot) {
  import.meta.hot.accept(() => log('note: a source file changed during the run; the results are for the code loaded at its start'));
  import.meta.hot.on('vite:beforeFullReload', () => console.log('note: the dev server is reloading the page (new dependency bundle); this run is lost'));
}

// Every engine runs the same work per timed call: `INNER` back-to-back n³ products on data
// already on the GPU, then waits for the GPU to finish (reading back 4 bytes of the result for
// the peers, whose only sync is a read-back). Upload is outside the timing for all three.
const INNER = 4;

async function oursMatmul(rt: GpuRuntime, n: number, reps: number): Promise<number> {
  const kernel = await MatmulKernel.create(rt, { M: n, N: n, K: n });
  const a = rt.storage('bench.a', randomArray(n * n, 1));
  const b = rt.storage('bench.b', randomArray(n * n, 2));
  const c = rt.storage('bench.c', n * n * 4);
  try {
    return await timeIt(async () => {
      const enc = rt.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      for (let i = 0; i < INNER; i++) kernel.encode(pass, a, b, c);
      pass.end();
      rt.device.queue.submit([enc.finish()]);
      await rt.read(c, 4);
    }, reps);
  } finally {
    rt.release(a, b, c);
    kernel.dispose();
  }
}

async function tfjsMatmul(n: number, reps: number): Promise<number> {
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-webgpu');
  await tf.setBackend('webgpu');
  await tf.ready();
  const a = tf.tensor2d(randomArray(n * n, 1), [n, n]);
  const b = tf.tensor2d(randomArray(n * n, 2), [n, n]);
  try {
    return await timeIt(async () => {
      let c = tf.matMul(a, b);
      for (let i = 1; i < INNER; i++) {
        c.dispose();
        c = tf.matMul(a, b);
      }
      const corner = tf.slice(c, [0, 0], [1, 1]);
      await corner.data();
      corner.dispose();
      c.dispose();
    }, reps);
  } finally {
    a.dispose();
    b.dispose();
  }
}

async function ortMatmul(n: number, reps: number): Promise<number> {
  const ort = await import('onnxruntime-web/webgpu');
  ort.env.wasm.wasmPaths = new URL('/node_modules/onnxruntime-web/dist/', location.href).href;
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(matmulOnnxModel(n, n, n), {
    executionProviders: ['webgpu'],
    preferredOutputLocation: 'gpu-buffer',
  });
  // Typed as a promise in some onnxruntime-web versions; awaiting a device is harmless either way.
  const device = (await (ort.env.webgpu.device as unknown as Promise<GPUDevice> | GPUDevice)) as GPUDevice;
  const upload = (data: Float32Array) => {
    const buf = device.createBuffer({ size: data.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
    device.queue.writeBuffer(buf, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
    return ort.Tensor.fromGpuBuffer(buf, { dataType: 'float32', dims: [n, n] });
  };
  const A = upload(randomArray(n * n, 1));
  const B = upload(randomArray(n * n, 2));
  try {
    return await timeIt(async () => {
      let out: Record<string, import('onnxruntime-web').Tensor> = {};
      for (let i = 0; i < INNER; i++) {
        for (const t of Object.values(out)) t.dispose();
        out = await session.run({ A, B });
      }
      await out.Y.getData(true);
    }, reps);
  } finally {
    await session.release();
  }
}

const matmulSuite: Suite = async (rt, log) => {
  const records: BenchRecord[] = [];
  for (const n of [128, 256, 512]) {
    const reps = n >= 512 ? 3 : 5;
    const flops = 2 * n ** 3 * INNER;
    const engines: [string, () => Promise<number>][] = [
      ['lwm-wgsl', () => oursMatmul(rt, n, reps)],
      ['tfjs-webgpu', () => tfjsMatmul(n, reps)],
      ['ort-web-webgpu', () => ortMatmul(n, reps)],
    ];
    for (const [engine, run] of engines) {
      try {
        const ms = await run();
        const gflops = flops / (ms * 1e6);
        log(`matmul ${n}³ ${engine}: ${(ms / INNER).toFixed(1)} ms per product, ${gflops.toFixed(3)} GFLOP/s`);
        records.push({ suite: 'matmul', case: `${n}x${n}x${n}`, engine, metric: 'gflops', value: gflops, unit: 'GFLOP/s' });
        records.push({ suite: 'matmul', case: `${n}x${n}x${n}`, engine, metric: 'ms_per_product', value: ms / INNER, unit: 'ms' });
      } catch (e) {
        log(`matmul ${n}³ ${engine}: FAILED ${(e as Error).message}`);
        records.push({ suite: 'matmul', case: `${n}x${n}x${n}`, engine, metric: 'error', value: NaN, unit: (e as Error).message.slice(0, 200) });
      }
    }
  }
  return records;
};

const SUITES: Record<string, Suite> = {
  matmul: matmulSuite,
  train: trainSuite,
  generate: generateSuite,
  rollout: rolloutSuite,
  kernels: kernelsSuite,
  llm: llmSuite,
};

declare global {
  interface Window {
    runBench(suites: string[], options?: Record<string, string>): Promise<{ adapter: string; records: BenchRecord[] }>;
    benchSuites: string[];
  }
}

window.benchSuites = Object.keys(SUITES);
window.runBench = async (names, options = {}) => {
  const rt = await GpuRuntime.create();
  log(`adapter: ${rt.describe()}`);
  const records: BenchRecord[] = [];
  try {
    for (const name of names) {
      const suite = SUITES[name];
      if (!suite) throw new Error(`unknown browser suite '${name}'`);
      records.push(...(await suite(rt, log, options)));
    }
  } finally {
    rt.dispose();
  }
  return { adapter: rt.describe(), records };
};
