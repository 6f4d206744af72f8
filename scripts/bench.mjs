#!/usr/bin/env node
// `npm run bench [-- --suite NAME ...]`: benchmarks that print a table and append JSON lines
//   {"suite","case","engine","metric","value","unit", ...run info}
// to bench-results/bench.jsonl, each suite's as soon as that suite finishes (a later crash or a
// failing suite loses nothing already measured). Browser suites run in headless Chromium on its WebGPU adapter
// (bench/main.ts, served by Vite); Node suites are scripts/bench-<name>.ts run through tsx.
// Speed is reported beside a peer measured in the same run; compare ratios, not absolutes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromiumArgs, findChromium, gpuEnv, HOW_TO_GET_CHROMIUM } from './chromium.mjs';
import { appendRecords, parseRecords, speedupRecords } from './bench-records.mjs';

const BROWSER_SUITES = ['matmul', 'kernels', 'train', 'generate', 'rollout', 'llm'];
const NODE_SUITES = ['tokenizer', 'judge', 'pipeline', 'infer', 'serve', 'agent'];
// Run only when named: `llm` at its default size (SmolLM2-135M's shape) takes long without a real GPU.
const ON_REQUEST = ['llm'];
// Options passed to the suites (`--suite llm --layers 2`): the browser suites get them all
// (bench/llm-shape.ts reads and checks its own); a Node suite gets those NODE_OPTIONS names for
// it, as `--NAME VALUE` arguments.
const NODE_OPTIONS = { agent: ['episodes', 'turns', 'world-max-tokens', 'batch-tokens', 'reps'] };
const SUITE_OPTIONS = [...new Set(['layers', 'prompt-tokens', 'decode-tokens', 'reps', 'lora-rank', 'train-tokens', ...Object.values(NODE_OPTIONS).flat()])];

const { values } = parseArgs({
  options: {
    suite: { type: 'string', multiple: true },
    out: { type: 'string', default: 'bench-results/bench.jsonl' },
    ...Object.fromEntries(SUITE_OPTIONS.map((o) => [o, { type: 'string' }])),
  },
});
const suiteOptions = Object.fromEntries(SUITE_OPTIONS.filter((o) => values[o] !== undefined).map((o) => [o, values[o]]));
const wanted = values.suite ?? [...BROWSER_SUITES, ...NODE_SUITES].filter((s) => !ON_REQUEST.includes(s));
for (const s of wanted) {
  if (!BROWSER_SUITES.includes(s) && !NODE_SUITES.includes(s)) {
    console.error(`bench: unknown suite '${s}'. Suites: ${[...BROWSER_SUITES, ...NODE_SUITES].join(', ')}`);
    process.exit(2);
  }
}
mkdirSync('bench-results', { recursive: true });
const runId = new Date().toISOString();
const allRecords = [];
const failed = [];
/** Writes a finished suite's records to the results file now and keeps them for the tables. */
function keep(records, extra) {
  allRecords.push(...appendRecords(values.out, records, extra));
  if (records.length) console.log(`[bench] ${records.length} records appended to ${values.out}`);
}

async function runBrowserSuites(names) {
  const chromium = findChromium();
  if (!chromium) {
    console.error(HOW_TO_GET_CHROMIUM);
    failed.push(...names);
    return;
  }
  Object.assign(process.env, gpuEnv());
  const { createServer, searchForWorkspaceRoot } = await import('vite');
  // node_modules may be a link to a checkout elsewhere: onnxruntime-web's wasm is served from where it really is.
  const fs = { allow: [searchForWorkspaceRoot(process.cwd()), realpathSync('node_modules')] };
  const server = await createServer({
    configFile: 'vite.config.ts',
    server: { port: 0, host: '127.0.0.1', fs },
    logLevel: 'error',
    optimizeDeps: { include: ['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-webgpu', 'onnxruntime-web', 'onnxruntime-web/webgpu'] },
  });
  await server.listen();
  const url = server.resolvedUrls.local[0] + 'bench/index.html';
  const { chromium: pw } = await import('playwright');
  const browser = await pw.launch({ executablePath: chromium, args: chromiumArgs(), headless: true });
  try {
    const page = await browser.newPage();
    page.on('console', (m) => m.type() === 'log' && console.log(`  [page] ${m.text()}`));
    page.on('pageerror', (e) => console.error(`  [page error] ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => typeof window.runBench === 'function', null, { timeout: 120_000 });
    const available = await page.evaluate(() => window.benchSuites);
    const runnable = names.filter((n) => available.includes(n));
    for (const n of names.filter((n) => !available.includes(n))) console.log(`bench: suite '${n}' is not built yet; skipped`);
    if (runnable.length === 0) return;
    // One suite per call, so each suite's records are on disk before the next one starts.
    for (const name of runnable) {
      try {
        const { adapter, records } = await page.evaluate(([s, o]) => window.runBench(s, o), [[name], suiteOptions]);
        keep(records, { adapter, runtime: 'chromium', run: runId });
      } catch (e) {
        failed.push(name);
        console.error(`bench: suite '${name}' failed: ${e.message}`);
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

function runNodeSuite(name) {
  const script = `scripts/bench-${name}.ts`;
  if (!existsSync(script)) {
    console.log(`bench: suite '${name}' (${script}) is not built yet; skipped`);
    return;
  }
  const tmp = join(tmpdir(), `lwm-bench-${process.pid}-${name}.jsonl`);
  rmSync(tmp, { force: true });
  console.log(`\n[bench] ${name}: npx tsx ${script}`);
  const options = (NODE_OPTIONS[name] ?? []).filter((o) => suiteOptions[o] !== undefined).flatMap((o) => [`--${o}`, suiteOptions[o]]);
  const r = spawnSync('npx', ['tsx', '--import', './bin/raw-hook.mjs', script, ...options, '--json', tmp], { stdio: 'inherit', env: gpuEnv() });
  if (r.status !== 0) {
    failed.push(name);
    console.error(`bench: suite '${name}' failed (exit ${r.status}); keeping the records it wrote before failing`);
  }
  if (!existsSync(tmp)) return;
  const { records, errors } = parseRecords(readFileSync(tmp, 'utf8'), name);
  rmSync(tmp, { force: true });
  keep(records, { runtime: 'node', run: runId });
  for (const e of errors) console.error(`bench: ${e}`);
  if (errors.length && !failed.includes(name)) failed.push(name);
}

const browserWanted = wanted.filter((s) => BROWSER_SUITES.includes(s));
if (browserWanted.length) {
  try {
    await runBrowserSuites(browserWanted);
  } catch (e) {
    // Records of the suites that finished are already on disk; the Node suites still run.
    failed.push(...browserWanted.filter((s) => !allRecords.some((r) => r.suite === s) && !failed.includes(s)));
    console.error(`bench: the browser suites stopped: ${e.message}`);
  }
}
for (const s of wanted.filter((s) => NODE_SUITES.includes(s))) runNodeSuite(s);

// ---- report -------------------------------------------------------------------------------
function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r, ri) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ') + (ri === 0 ? '\n' + widths.map((w) => '-'.repeat(w)).join('  ') : ''))
    .join('\n');
}

const fmt = (v) => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(3)) : 'n/a');
const rows = [['suite', 'case', 'engine', 'metric', 'value', 'unit']];
for (const r of allRecords) rows.push([r.suite, r.case, r.engine, r.metric, fmt(r.value), r.metric === 'error' ? r.unit : r.unit]);
if (allRecords.length) {
  console.log('\n' + table(rows));
  // Our ratio against each peer, wherever the same suite/case/metric has both.
  const speedups = speedupRecords(allRecords, runId);
  if (speedups.length) {
    const ratios = [['suite', 'case', 'metric', 'peer', 'ours / peer']];
    for (const r of speedups)
      ratios.push([r.suite, r.case, r.metric.replace(/^speedup_/, ''), r.peer, `${r.value.toFixed(2)}× ${r.value >= 1 ? 'faster' : 'slower'}`]);
    console.log('\n' + table(ratios));
    keep(speedups, {});
  }
}
console.log(`\n[bench] ${allRecords.length} records in ${values.out} from this run${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
process.exitCode = failed.length ? 1 : 0;
