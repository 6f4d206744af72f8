#!/usr/bin/env node
// `npm run screenshots`: rewrites the pictures of the README and docs/ (docs/screenshots/*.png). The end-to-end
// specs that take them (e2e/helpers.ts docScreenshotPath) write there only with LWM_SCREENSHOTS=1,
// which this sets; `npm test` leaves them alone. Builds, then runs those specs in the same Chromium
// with the same environment as `npm test`. Extra arguments go to Playwright (e.g. one spec's file,
// or -g TITLE).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findChromium, gpuEnv, HOW_TO_GET_CHROMIUM } from './chromium.mjs';

const chromium = findChromium();
if (!chromium) {
  console.error(HOW_TO_GET_CHROMIUM);
  process.exit(1);
}
const env = { ...gpuEnv({ ...process.env, CHROMIUM_PATH: chromium }), LWM_SCREENSHOTS: '1' };

function run(cmd, args) {
  console.log(`[screenshots] ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const extra = process.argv.slice(2);
const specs = extra.length
  ? extra
  : readdirSync('e2e')
      .filter((f) => f.endsWith('.spec.ts') && readFileSync(join('e2e', f), 'utf8').includes('docScreenshotPath('))
      .map((f) => join('e2e', f));
run('npx', ['vite', 'build', '--logLevel', 'warn']);
run('npx', ['playwright', 'test', ...specs]);
console.log('[screenshots] done: see `git status docs/screenshots`');
