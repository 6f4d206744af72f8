import { defineConfig } from '@playwright/test';
import { chromiumArgs, findChromium } from './scripts/chromium.mjs';

// End-to-end tests drive the production build (dist/) served under a sub-path, in real
// Chromium with WebGPU (SwiftShader on machines without a GPU). `npm test` builds first.
const chromium = findChromium();
// E2E_PORT lets several checkouts run their end-to-end tests side by side.
const PORT = Number(process.env.E2E_PORT ?? 4321);
// One spec file at a time unless E2E_WORKERS=N asks for N side by side (a file's tests stay in
// order either way; on a CPU-emulated adapter the files then share its CPUs).
const WORKERS = Number(process.env.E2E_WORKERS ?? 1);
if (!Number.isInteger(WORKERS) || WORKERS < 1)
  throw new Error(`E2E_WORKERS: expected a whole number of at least 1, got ${JSON.stringify(process.env.E2E_WORKERS)}`);

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  timeout: 180_000,
  expect: { timeout: 60_000 },
  fullyParallel: false,
  workers: WORKERS,
  retries: 0,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}/studio/`,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      ...(chromium ? { executablePath: chromium } : {}),
      args: chromiumArgs(),
    },
    trace: 'off',
    screenshot: 'only-on-failure',
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
  webServer: {
    command: `node scripts/serve-dist.mjs --base /studio/ --port ${PORT}`,
    url: `http://127.0.0.1:${PORT}/studio/`,
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
