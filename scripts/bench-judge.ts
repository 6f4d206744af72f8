// Local rubric judge speed: judgements per second in this process, over a fixed mix of
// realistic pairs (shell listings, JSON tool results, accessibility-tree text, with history).
//   npx tsx scripts/bench-judge.ts [--n 5000] [--json FILE]
import { appendFileSync } from 'node:fs';
import { clearRubricCache, rubricJudge } from '../src/core/judge/rubric.ts';
import { verify } from '../src/core/judge/verifier.ts';
import type { JudgeInput } from '../src/core/judge/types.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}

// A small deterministic generator so every run judges the same pairs.
let state = 12345;
const rand = () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32;
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const NAMES = ['main.py', 'README.md', 'config.yaml', 'src', 'tests', 'notes.txt', 'data.csv', 'Makefile', 'setup.cfg', 'build'];

function listing(n: number): string {
  const lines = [`total ${n * 4}`];
  for (let i = 0; i < n; i++)
    lines.push(`-rw-r--r-- 1 user user ${Math.floor(rand() * 9000)} Jan ${1 + (i % 28)} 10:${String(i % 60).padStart(2, '0')} ${pick(NAMES)}`);
  return lines.join('\n');
}

function jsonResult(n: number): string {
  const items = Array.from({ length: n }, (_, i) => ({ id: `r-${i}`, name: pick(NAMES), size: Math.floor(rand() * 1e5), ok: rand() > 0.3 }));
  return JSON.stringify({ result: { count: n, items } }, null, 2);
}

function tree(n: number): string {
  return Array.from({ length: n }, (_, i) => `[${i}] ${pick(['button', 'link', 'textbox', 'heading'])} "${pick(NAMES)}"${rand() > 0.5 ? ' focused' : ''}`).join(
    '\n',
  );
}

function perturb(text: string): string {
  const r = rand();
  if (r < 0.2) return text;
  if (r < 0.5) return text.replace(/\d+/g, (d) => String(Number(d) + 1));
  if (r < 0.7) return text.split('\n').slice(0, -2).join('\n');
  if (r < 0.85) return Array.from({ length: 20 }, () => text.split('\n')[0]).join('\n');
  return 'Error: command failed';
}

const inputs: JudgeInput[] = [];
for (let i = 0; i < 200; i++) {
  const kind = i % 3;
  const reference = kind === 0 ? listing(8 + (i % 12)) : kind === 1 ? jsonResult(3 + (i % 6)) : tree(10 + (i % 15));
  const history = Array.from({ length: 5 }, (_, k) => ({ action: `cat ${pick(NAMES)} # ${k}`, observation: kind === 1 ? jsonResult(2) : listing(4) }));
  inputs.push({
    domain: ['terminal', 'mcp', 'web'][kind],
    history,
    action: kind === 1 ? '{"name": "list", "arguments": {"count": 5}}' : 'ls -la',
    prediction: perturb(reference),
    reference,
  });
}

const n = Number(arg('n', '5000'));
for (let i = 0; i < 500; i++) rubricJudge(inputs[i % inputs.length]); // warm the JIT
const t0 = performance.now();
let checksum = 0;
for (let i = 0; i < n; i++) checksum += rubricJudge(inputs[i % inputs.length]).total;
const judgeMs = performance.now() - t0;
// Cold: no reference or history text seen before (a benchmark over distinct samples).
const tc = performance.now();
for (let i = 0; i < n; i++) {
  clearRubricCache();
  rubricJudge(inputs[i % inputs.length]);
}
const coldMs = performance.now() - tc;
const t1 = performance.now();
let passed = 0;
for (let i = 0; i < n; i++) passed += verify(inputs[i % inputs.length]).pass ? 1 : 0;
const verifyMs = performance.now() - t1;

const avgChars = inputs.reduce((s, x) => s + x.reference.length + x.prediction.length, 0) / inputs.length;
const result = {
  judgements: n,
  judge_per_s: Math.round((n / judgeMs) * 1000),
  judge_us_each: Math.round((judgeMs / n) * 1000),
  judge_cold_per_s: Math.round((n / coldMs) * 1000),
  verify_per_s: Math.round((n / verifyMs) * 1000),
  avg_chars_per_pair: Math.round(avgChars),
  history_turns: 5,
  mean_total: Number((checksum / n).toFixed(4)),
  verifier_pass_rate: Number((passed / n).toFixed(4)),
  node: process.version,
};
console.log('local rubric judge (Node, one thread)');
console.log(`  judgements        ${n}`);
console.log(`  pair size         ${result.avg_chars_per_pair} chars (prediction + reference), ${result.history_turns} history turns`);
console.log(`  rubric judge      ${result.judge_per_s} judgements/s (${result.judge_us_each} µs each; references and histories recurring, as in an RL group)`);
console.log(`  rubric judge cold ${result.judge_cold_per_s} judgements/s (every reference and history new)`);
console.log(`  rule verifier     ${result.verify_per_s} checks/s`);
console.log(`  mean total score  ${result.mean_total} (checksum: same inputs give the same value)`);
// `--json FILE` (as `npm run bench -- --suite judge` passes): the figures as JSON lines, one
// bench record each, like every other suite.
const out = arg('json', '');
if (out) {
  const c = `${n} pairs, ${result.avg_chars_per_pair} chars, ${result.history_turns} history turns`;
  const rows: [string, string, number, string][] = [
    ['lwm-rubric', 'judge_per_s', result.judge_per_s, 'judgements/s'],
    ['lwm-rubric', 'judge_us_each', result.judge_us_each, 'µs'],
    ['lwm-rubric', 'judge_cold_per_s', result.judge_cold_per_s, 'judgements/s'],
    ['lwm-verifier', 'verify_per_s', result.verify_per_s, 'checks/s'],
    ['lwm-rubric', 'mean_total', result.mean_total, 'score'],
    ['lwm-verifier', 'pass_rate', result.verifier_pass_rate, 'fraction'],
  ];
  for (const [engine, metric, value, unit] of rows)
    appendFileSync(out, JSON.stringify({ suite: 'judge', case: c, engine, metric, value, unit, node: result.node }) + '\n');
}
