import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { findChromium, chromiumArgs } from './scripts/chromium.mjs';
import viteConfig from './vite.config.ts';

// Three projects, one code base (tinygrad style: the same suite on every backend):
//  - unit:        pure TypeScript in Node (src/**/*.test.ts)
//  - gpu-node:    *.gpu.test.ts on Dawn (npm `webgpu`) in Node
//  - gpu-browser: the same *.gpu.test.ts in real Chromium through Playwright
// scripts/test.mjs sets the GPU environment (SwiftShader ICD etc.) before starting Vitest.
const chromium = findChromium();

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
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu-node',
          environment: 'node',
          include: ['src/**/*.gpu.test.ts'],
          setupFiles: ['src/gpu/testing/node-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 120_000,
          pool: 'forks',
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu-browser',
          include: ['src/**/*.gpu.test.ts'],
          // Long runs of code the parity tests already prove identical in both runtimes: the
          // 1,000-step memory test and the learning tests (pipeline, LoRA fine-tuning) run on Dawn only, to keep CI short.
          // So do the binding-split parity runs (shards) and the optimisation job over a checkpoint
          // it trains first. The CLI's GPU tests drive the Node command (files, processes), and the
          // Hugging Face folder jobs' test reads the fixture folder from disk: Dawn only. So do the quick
          // recipe's parity with the reference trainer (node:crypto, a minute of SwiftShader) and its
          // job's stage and resume runs (the e2e Train spec drives the same job in Chromium).
          exclude: ['src/model/memory.gpu.test.ts', 'src/model/shards.gpu.test.ts', 'src/train/pipeline.gpu.test.ts', 'src/train/lora.gpu.test.ts', 'src/train/optimize.gpu.test.ts', 'src/train/hfJobs.gpu.test.ts', 'src/train/recipe.gpu.test.ts', 'src/train/recipeJob.gpu.test.ts', 'src/cli/**', 'node_modules/**'],
          setupFiles: ['src/gpu/testing/browser-setup.ts'],
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
