// What `lwm optimize` writes to its folder after every step of the loop, and the tables it
// prints. DIR holds:
//   run.json              the options of the run (no API keys): what --resume continues with
//   state.json            the loop state (src/core/optimize/loop.ts), rewritten after every step
//   splits.json           the dev and test samples (task, id, turn)
//   lineage.json          every version: parent, round, status, note, reason, dev mean, paired
//                         comparison with its parent; the round summaries; the test score
//   versions/ID.jinja     each version's template text
//   versions/ID.json      each version's record: the above, its objective per dev sample, its
//                         score table per domain and dimension, its error analysis
//   best.json             the best version as a template JSON the Prompts view imports
// Every file is written beside its target and renamed over it, so a killed run leaves whole files.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../io.ts';
import type { BenchSample } from '../../core/bench/runner.ts';
import { formatScoreTable } from '../../core/bench/score.ts';
import type { LoopState, Version } from '../../core/optimize/loop.ts';
import { TARGET_CLOSE, TARGET_OPEN } from '../../core/templates/builtin.ts';
import { RUN_FILE, STATE_FILE } from './optimizeArgs.ts';

const json = (v: unknown): string => JSON.stringify(v, null, 2) + '\n';

const sampleKeyOf = (s: BenchSample) => ({ task: s.record?.task ?? s.domain, id: s.id, turn_idx: s.turnIdx });

export function writeRunFiles(
  dir: string,
  options: Record<string, unknown>,
  start: { text: string; note: string },
  splits: { dev: BenchSample[]; test: BenchSample[] },
): void {
  mkdirSync(join(dir, 'versions'), { recursive: true });
  writeFileAtomicSync(join(dir, RUN_FILE), json({ format: 'lwm-optimize-run', version: 1, options, start }));
  writeFileAtomicSync(join(dir, 'splits.json'), json({ dev: splits.dev.map(sampleKeyOf), test: splits.test.map(sampleKeyOf) }));
}

/** The dev/test samples a run was started with (to check that a resumed run reads the same data). */
export function splitsFingerprint(splits: { dev: BenchSample[]; test: BenchSample[] }): string {
  return JSON.stringify({ dev: splits.dev.map(sampleKeyOf), test: splits.test.map(sampleKeyOf) });
}

/** One line of the lineage: the version without its text and analysis. */
function lineageEntry(v: Version) {
  const c = v.comparison;
  return {
    id: v.id,
    parent: v.parent,
    round: v.round,
    status: v.status,
    optimizer: v.optimizer,
    note: v.note,
    ...(v.reason !== undefined && { reason: v.reason }),
    mean: v.mean ?? null,
    ...(c && { vsParent: { n: c.n, meanDiff: c.meanDiff, ci: c.ci, level: c.level } }),
    file: `versions/${v.id}.jinja`,
  };
}

function versionRecord(v: Version, dev: BenchSample[]) {
  const a = v.analysis;
  return {
    ...lineageEntry(v),
    text: v.text,
    ...(a && {
      scores: {
        perSample: a.objectives.map((objective, i) => ({ ...sampleKeyOf(dev[i]), objective })),
        table: a.table,
      },
      analysis: { dimensions: a.dimensions, mismatches: a.mismatches, verifier: a.verifier, lowest: a.lowest },
    }),
    ...(v.comparison && { comparison: v.comparison }),
  };
}

/** Writes state.json, lineage.json, each version's files and best.json. */
export function writeState(dir: string, s: LoopState, dev: BenchSample[], written: Map<string, string>): void {
  writeFileAtomicSync(join(dir, STATE_FILE), JSON.stringify(s));
  for (const v of s.versions) {
    const record = json(versionRecord(v, dev));
    if (written.get(v.id) === record) continue;
    writeFileAtomicSync(join(dir, 'versions', `${v.id}.jinja`), v.text);
    writeFileAtomicSync(join(dir, 'versions', `${v.id}.json`), record);
    written.set(v.id, record);
  }
  const lineage = {
    format: 'lwm-optimize-lineage',
    // 2: each version's optimizer under the key `optimizer` (version 1 spelt it the British way).
    version: 2,
    best: s.best,
    round: s.round,
    rounds: s.rounds,
    calls: s.calls,
    test: s.test ?? null,
    stopped: s.stopped ?? null,
    stopNote: s.stopNote ?? null,
    versions: s.versions.map(lineageEntry),
  };
  writeFileAtomicSync(join(dir, 'lineage.json'), json(lineage));
  const best = s.versions.find((v) => v.id === s.best);
  if (best)
    writeFileAtomicSync(
      join(dir, 'best.json'),
      json({
        version: `opt-${best.id}`,
        description: `lwm optimize: ${best.id} (${best.note})`,
        text: best.text,
        targetOpen: TARGET_OPEN,
        targetClose: TARGET_CLOSE,
      }),
    );
}

const f1 = (x: number | null | undefined): string => (typeof x === 'number' ? x.toFixed(1) : '-');

function table(head: string[], rows: string[][]): string {
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(width[i]))
      .join('  ')
      .trimEnd();
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

const clip = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** The round table, the versions table and the test score: what stdout shows at the end of a run. */
export function formatRun(s: LoopState): string {
  const v0 = s.versions.find((v) => v.id === 'v0');
  const rounds = table(
    ['round', 'candidates', 'valid', 'accepted', 'best', 'dev mean'],
    [
      ['0', '-', '-', '-', 'v0', f1(v0?.mean)],
      ...s.rounds.map((r) => [
        String(r.round),
        String(r.candidates),
        String(s.versions.filter((v) => v.round === r.round && v.status !== 'invalid').length),
        String(r.accepted),
        r.best,
        f1(r.mean),
      ]),
    ],
  );
  const versions = table(
    ['version', 'parent', 'status', 'dev mean', 'Δ vs parent [CI]', 'note / reason'],
    s.versions.map((v) => {
      const c = v.comparison;
      const diff =
        c && c.meanDiff !== null
          ? `${c.meanDiff >= 0 ? '+' : ''}${c.meanDiff.toFixed(1)}${c.ci ? ` [${c.ci[0].toFixed(1)}, ${c.ci[1].toFixed(1)}]` : ''}`
          : '-';
      const why = v.status === 'invalid' ? `${v.note} — ${v.reason ?? ''}` : v.note;
      return [v.id, v.parent ?? '-', v.status, f1(v.mean), diff, clip(why.replace(/\s+/gu, ' '), 100)];
    }),
  );
  const test = s.test ? `\nHeld-out test split, ${s.test.version}: mean ${f1(s.test.mean)}\n${formatScoreTable(s.test.table)}` : '';
  return `Rounds\n${rounds}\nVersions\n${versions}${test}\n${s.stopNote ? `Stopped: ${s.stopped} (${s.stopNote})\n` : ''}`;
}
