// The judge ladder on the default dataset's held-out turns: the mean score per domain of the
// reference, a one-token change of its deterministic region, the previous observation, a fixed
// plausible string, random text and an empty answer, on AgentWorldBench's 0–100 scale.
//   npx tsx scripts/judge-ladder.ts [--data FILE] [--dims] [--json FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { ladderInput, ladderSamples, ladderViolations, RUNG_LABELS, RUNGS, runLadder, toPercent } from '../src/core/judge/ladder.ts';
import { rubricJudge } from '../src/core/judge/rubric.ts';
import type { Trajectory } from '../src/core/schema/types.ts';
import { DIMENSIONS } from '../src/core/judge/types.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}

const file = arg('data', new URL('../public/default-dataset.jsonl', import.meta.url).pathname);
const trajectories = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Trajectory);
const t0 = performance.now();
const rows = runLadder(ladderSamples(trajectories), ladderInput, rubricJudge);
const ms = performance.now() - t0;

console.log(`local rubric judge ladder, eval split of ${file.split('/').pop()} ((mean − 1) / 4 × 100)`);
console.log(`${'domain'.padEnd(10)}${'turns'.padStart(6)}${RUNGS.map((r) => r.padStart(11)).join('')}`);
for (const row of rows)
  console.log(`${row.domain.padEnd(10)}${String(row.turns).padStart(6)}${RUNGS.map((r) => toPercent(row.mean[r]).toFixed(1).padStart(11)).join('')}`);
console.log(RUNGS.map((r) => `  ${r}: ${RUNG_LABELS[r]}`).join('\n'));
if (process.argv.includes('--dims')) {
  console.log(`\nmean 1–5 score per dimension (format factuality consistency realism quality)`);
  for (const row of rows)
    console.log(`${row.domain.padEnd(10)}${RUNGS.map((r) => `${r}: ${DIMENSIONS.map((d) => row.dims[r][d].toFixed(1)).join(' ')}`).join(' | ')}`);
}
const violations = rows.flatMap((r) => ladderViolations(r));
console.log(violations.length ? `ladder broken:\n  ${violations.join('\n  ')}` : 'ladder holds in every domain');
const judged = rows.reduce((s, r) => s + r.turns, 0) * RUNGS.length;
console.log(`${judged} judgements in ${(ms / 1000).toFixed(1)} s`);
const out = arg('json', '');
if (out)
  writeFileSync(
    out,
    JSON.stringify(
      rows.map((r) => ({ ...r, percent: Object.fromEntries(RUNGS.map((k) => [k, Number(toPercent(r.mean[k]).toFixed(2))])) })),
      null,
      2,
    ) + '\n',
  );
if (violations.length) process.exitCode = 1;
