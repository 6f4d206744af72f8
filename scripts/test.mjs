#!/usr/bin/env node
// `npm test`: every suite in one go.
//   1. lint and format: Biome with biome.jsonc (one test), then the import boundaries:
//      dependency-cruiser with .dependency-cruiser.cjs (one test)
//   2. Vitest: unit (Node), gpu-node (Dawn), gpu-browser (Chromium) — see vitest.config.ts
//   3. the production build, then Playwright end-to-end tests against it (e2e/)
// Finds Chromium by itself ($CHROMIUM_PATH, /usr/bin/chromium, Playwright's browser) and sets
// the environment WebGPU needs on GPU-less machines (SwiftShader). Extra arguments go to Vitest
// and skip the boundary and end-to-end steps (e.g. `npm test -- --project unit`). Ends with one line
// `tests: N passed, M failed` over all suites.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findChromium, gpuEnv, HOW_TO_GET_CHROMIUM } from './chromium.mjs';

const chromium = findChromium();
if (!chromium) {
  console.error(HOW_TO_GET_CHROMIUM);
  process.exit(1);
}
const env = gpuEnv({ ...process.env, CHROMIUM_PATH: chromium });
console.log(`[lwm test] Chromium: ${chromium}`);
if (env.VK_ICD_FILENAMES) console.log(`[lwm test] Vulkan ICD: ${env.VK_ICD_FILENAMES}`);
if (env.CI) console.log('[lwm test] CI=true: a GPU suite without a WebGPU adapter fails.');

const reports = 'test-results/reports';
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const totals = { passed: 0, failed: 0, skipped: 0 };

function count(file, pick) {
  if (!existsSync(file)) return false;
  const r = pick(JSON.parse(readFileSync(file, 'utf8')));
  totals.passed += r.passed;
  totals.failed += r.failed;
  totals.skipped += r.skipped;
  return true;
}

function finish(code) {
  const skipped = totals.skipped ? `, ${totals.skipped} skipped` : '';
  console.log(`\ntests: ${totals.passed} passed, ${totals.failed} failed${skipped}`);
  process.exit(code);
}

function run(label, cmd, args, extraEnv = {}) {
  console.log(`\n[lwm test] ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...env, ...extraEnv } });
  return r.status ?? 1;
}

const extra = process.argv.slice(2);
if (extra.length === 0) {
  // Lint and format first: one test. `npx biome check --write .` fixes what it can.
  const lintCode = run('lint', 'npx', ['biome', 'ci', '--error-on-warnings', '.']);
  if (lintCode !== 0) {
    totals.failed += 1;
    console.error('[lwm test] lint or formatting failed (see biome.jsonc; `npx biome check --write .` formats and applies the safe fixes)');
    finish(lintCode);
  }
  totals.passed += 1;
  // A wrong import fails here, before the long suites: one test, passed or failed.
  const boundaryCode = run('boundaries', 'npx', ['depcruise', 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err']);
  if (boundaryCode !== 0) {
    totals.failed += 1;
    console.error('[lwm test] an import crosses a layer boundary (see .dependency-cruiser.cjs and docs/architecture.md)');
    finish(boundaryCode);
  }
  totals.passed += 1;
}
const vitestJson = join(reports, 'vitest.json');
const vitestCode = run('vitest', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${vitestJson}`, ...extra]);
const counted = count(vitestJson, (j) => ({ passed: j.numPassedTests, failed: j.numFailedTests, skipped: j.numPendingTests + j.numTodoTests }));
if (vitestCode !== 0) {
  if (!counted) totals.failed += 1;
  console.error(`[lwm test] vitest failed (exit ${vitestCode})`);
  finish(vitestCode);
}
if (extra.length === 0) {
  const buildCode = run('build', 'npx', ['vite', 'build', '--logLevel', 'warn']);
  if (buildCode !== 0) {
    totals.failed += 1;
    console.error('[lwm test] the production build failed');
    finish(buildCode);
  }
  const pwJson = join(reports, 'playwright.json');
  const e2eCode = run('e2e', 'npx', ['playwright', 'test', '--reporter=list,json'], { PLAYWRIGHT_JSON_OUTPUT_NAME: pwJson });
  const e2eCounted = count(pwJson, (j) => ({ passed: j.stats.expected, failed: j.stats.unexpected + j.stats.flaky, skipped: j.stats.skipped }));
  if (e2eCode !== 0) {
    if (!e2eCounted) totals.failed += 1;
    console.error(`[lwm test] e2e failed (exit ${e2eCode})`);
    finish(e2eCode);
  }
}
console.log('\n[lwm test] all suites passed');
finish(0);
