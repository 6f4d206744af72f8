import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { findChromium, chromiumArgs } from './scripts/chromium.mjs';
import viteConfig from './vite.config.ts';

// Three projects, one code base (tinygrad style: the kernels on every backend):
//  - unit:        pure TypeScript in Node (src/**/*.test.ts)
//  - gpu-node:    *.gpu.test.ts on Dawn (npm `webgpu`) in Node, but CHROMIUM_ONLY
//  - gpu-browser: *.gpu.test.ts in real Chromium through Playwright, but DAWN_ONLY
// scripts/test.mjs sets the GPU environment (SwiftShader ICD etc.) before starting Vitest.
const chromium = findChromium();

// The two GPU projects run side by side (Vitest starts the browser pool beside the forks pool, each
// one file at a time), so on a small machine the suite lasts as long as the longer of the two.
// The kernels and the runtime run on both. A model-, training- or job-level file runs the same WGSL
// on the same adapter through either runtime, so it runs on one: on Dawn where it needs Node (files,
// processes, node:crypto) or is a long learning run, in Chromium where it is what the app does in a
// page (jobs in a Web Worker, IndexedDB, a lost device) or otherwise, which keeps the two runs about
// the same length.
const DAWN_ONLY = [
  // The CLI's GPU tests drive the Node command (files, processes).
  'src/cli/**',
  // The Hugging Face folder jobs' test reads the fixture folder from disk.
  'src/jobs/hfJobs.gpu.test.ts',
  // The quick recipe's parity with the reference trainer (node:crypto) and its job's stage and
  // resume runs (the e2e Train spec drives the same job in Chromium).
  'src/train/recipe.gpu.test.ts',
  'src/jobs/recipeJob.gpu.test.ts',
  // Long runs: the 1,000-step memory test, LoRA fine-tuning's learning test and the optimization
  // job over a checkpoint it trains first.
  'src/model/memory.gpu.test.ts',
  'src/train/lora.gpu.test.ts',
  'src/jobs/optimize.gpu.test.ts',
  // A Hugging Face agent policy: the fixture folder read from disk.
  'src/train/agent/hfPolicy.gpu.test.ts',
];
const CHROMIUM_ONLY = [
  // The app's jobs as a page runs them: the worker, the job registry, the Playground's turns and
  // device loss in every job kind (their WGSL is the kernels' and the models', tested on both).
  'src/jobs/worker.gpu.test.ts',
  'src/jobs/jobs.gpu.test.ts',
  'src/jobs/playground.gpu.test.ts',
  'src/jobs/lost.gpu.test.ts',
  // The Sim RL experiment's arms, cut and resumed (the Sim RL panel runs it as a job in a page).
  'src/train/agent/experiment.gpu.test.ts',
  // A micro agent's GSPO against its shuffled-reward control (about 2 minutes): a learning run,
  // here because the Dawn side is the longer of the two GPU projects.
  'src/train/agent/learns.gpu.test.ts',
  // Model parity: the reference GPT, the Hugging Face models, f16 weights, split bindings, LoRA,
  // PEFT adapters, KV-cache generation and the shared-prefix GSPO pass.
  'src/model/gpt.gpu.test.ts',
  'src/model/hf/hf.gpu.test.ts',
  'src/model/halfWeights.gpu.test.ts',
  'src/model/shards.gpu.test.ts',
  'src/model/lora.gpu.test.ts',
  'src/model/hf/peft.gpu.test.ts',
  'src/model/generate.gpu.test.ts',
  'src/model/sharedPrefix.gpu.test.ts',
  // Backends and training-level figures: the model behind the backend interface, a Hugging Face
  // folder's KV reuse, RL's held-out evaluation, per-domain evaluation, the loss mask's settings.
  'src/backends/local.gpu.test.ts',
  'src/backends/hf.gpu.test.ts',
  'src/train/rl.gpu.test.ts',
  'src/train/evalDomains.gpu.test.ts',
  'src/train/maskconfig.gpu.test.ts',
  // The pipeline's learning tests (SFT, CPT then SFT, GSPO): long, and here rather than beside the
  // other long runs on Dawn so that the two projects last about as long (the same figures on both).
  'src/train/pipeline.gpu.test.ts',
];

export default defineConfig({
  // The app's module resolution (onnxruntime-web's wasm asset path), so the worker the browser tests start loads as the built app does.
  resolve: viteConfig.resolve,
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          environment: 'node',
          include: ['src/**/*.test.ts'],
          exclude: ['src/**/*.gpu.test.ts', 'node_modules/**'],
          testTimeout: 30_000,
          // The unit files run before the GPU projects start, alone: two at a time even on two
          // CPUs (Vitest's default there is one).
          maxWorkers: Math.max(2, availableParallelism() - 1),
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu-node',
          environment: 'node',
          include: ['src/**/*.gpu.test.ts'],
          exclude: [...CHROMIUM_ONLY, 'node_modules/**'],
          setupFiles: ['src/gpu/testing/nodeSetup.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          pool: 'forks',
          fileParallelism: false,
          // One process for every file, so the device each file's runtime is opened on, with the
          // pipelines compiled on it, is kept for the next (src/gpu/testing/runtime.ts): on
          // SwiftShader compiling the training pipelines costs about 25 s of CPU per process.
          // No GPU test mocks modules or globals.
          isolate: false,
          // After the unit files (group 0), beside gpu-browser (Vitest wants a project that is not
          // isolated in a group of its own order).
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu-browser',
          include: ['src/**/*.gpu.test.ts'],
          exclude: [...DAWN_ONLY, 'node_modules/**'],
          setupFiles: ['src/gpu/testing/browserSetup.ts'],
          // One page for every file, as gpu-node's one process: the runtime's kept device, with the
          // pipelines compiled on it, serves the next file (on SwiftShader a file's own device
          // compiled them again: the three model files gpt, shards and sharedPrefix took 247 s
          // that way and 142 s on the kept device). No GPU test mocks modules or globals.
          isolate: false,
          sequence: { groupOrder: 1 },
          testTimeout: 600_000,
          hookTimeout: 120_000,
          fileParallelism: false,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: {
                ...(chromium ? { executablePath: chromium } : {}),
                args: chromiumArgs(),
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
    ],
  },
});
