#!/usr/bin/env node
// `npm test`: every suite in one go.
//   1. Vitest: unit (Node), gpu-node (Dawn), gpu-browser (Chromium) — see vitest.config.ts
//   2. the production build, then Playwright end-to-end tests against it (e2e/)
// Finds Chromium by itself ($CHROMIUM_PATH, /usr/bin/chromium, Playwright's browser) and sets
// the environment WebGPU needs on GPU-less machines (SwiftShader). Extra arguments go to Vitest
// (e.g. `npm test -- --project unit`); LWM_SKIP_E2E=1 skips step 2 outside CI.
import { spawnSync } from 'node:child_process';
import { findChromium, gpuEnv, HOW_TO_GET_CHROMIUM } from './chromium.mjs';

const chromium = findChromium();
if (!chromium) {
  console.error(HOW_TO_GET_CHROMIUM);
  process.exit(1);
}
const env = gpuEnv({ ...process.env, CHROMIUM_PATH: chromium });
console.log(`[lwm test] Chromium: ${chromium}`);
if (env.VK_ICD_FILENAMES) console.log(`[lwm test] Vulkan ICD: ${env.VK_ICD_FILENAMES}`);

function run(label, cmd, args) {
  console.log(`\n[lwm test] ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) {
    console.error(`[lwm test] ${label} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
}

const extra = process.argv.slice(2);
run('vitest', 'npx', ['vitest', 'run', ...extra]);
if (extra.length === 0 && !(process.env.LWM_SKIP_E2E && !process.env.CI)) {
  run('build', 'npx', ['vite', 'build', '--logLevel', 'warn']);
  run('e2e', 'npx', ['playwright', 'test']);
}
console.log('\n[lwm test] all suites passed');
