// What the model sees of the default dataset at a preset's context (docs/method.md §11): per domain, the
// mean coverage of SFT rows under the truncation policy (src/core/templates/fit.ts), with a BPE
// tokenizer trained as `lwm train` trains one (the preset's vocabulary, at least 384).
//
//   npx tsx scripts/coverage-table.ts [--preset micro|bench|mini|small] [--template compact|v0|v1|v2] [--per-domain N]
//
// --per-domain limits the trajectories per domain (default 30) so the table takes seconds.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Trajectory } from '../src/core/schema/types.ts';
import { BUILTIN_TEMPLATES, renderTrajectory, templateLiterals } from '../src/core/templates/index.ts';
import { trainBpe } from '../src/core/tokenizer/index.ts';
import { expandTurns } from '../src/core/turns/index.ts';
import { PRESETS, type PresetName } from '../src/core/model/config.ts';
import { coverageMetrics, encodeSftSample } from '../src/train/data.ts';

const { values } = parseArgs({
  options: { preset: { type: 'string', default: 'mini' }, template: { type: 'string', default: 'compact' }, 'per-domain': { type: 'string', default: '30' } },
});
const preset = PRESETS[values.preset as PresetName];
const template = BUILTIN_TEMPLATES[values.template!];
if (!preset || !template) throw new Error(`unknown preset or template: ${values.preset}, ${values.template}`);
const perDomain = Number(values['per-domain']);

const per = new Map<string, Trajectory[]>();
for (const line of readFileSync(new URL('../public/default-dataset.jsonl', import.meta.url), 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const t = JSON.parse(line) as Trajectory;
  const list = per.get(t.domain) ?? [];
  if (list.length < perDomain) list.push(t);
  per.set(t.domain, list);
}
const all = [...per.values()].flat();
const texts = all.map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t));
for (const v of Object.values(BUILTIN_TEMPLATES)) texts.push(...templateLiterals(v.text));
const tok = trainBpe(texts, { vocabSize: Math.max(384, preset.vocabSize) });

const pct = (x: number | undefined) => (x === undefined ? '—' : `${(x * 100).toFixed(0)}%`);
console.log(
  `preset ${values.preset} (context ${preset.contextLength}, vocabulary ${tok.vocabSize}), template ${template.version}, ${perDomain} trajectories per domain`,
);
console.log('| domain | rows | initial state | newest turn whole | earlier turns | system prompt | target |');
console.log('|---|---|---|---|---|---|---|');
const rowsAll = [];
for (const [domain, trajectories] of per) {
  const rows = expandTurns(trajectories).map((s) => encodeSftSample(tok, s, template, 1, { maxTokens: preset.contextLength + 1 }));
  rowsAll.push(...rows);
  const m = coverageMetrics(rows);
  console.log(
    `| ${domain} | ${rows.length} | ${pct(m.coverage_initial_state)} | ${pct(m.coverage_last_turn)} | ${pct(m.coverage_turns)} | ${pct(m.coverage_system)} | ${pct(m.coverage_target)} |`,
  );
}
const m = coverageMetrics(rowsAll);
console.log(
  `| all | ${rowsAll.length} | ${pct(m.coverage_initial_state)} | ${pct(m.coverage_last_turn)} | ${pct(m.coverage_turns)} | ${pct(m.coverage_system)} | ${pct(m.coverage_target)} |`,
);
