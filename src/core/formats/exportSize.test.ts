import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { estimateExportChars, exportLines, exportSizeWarning, type ExportTarget, type TrainingExportKind } from './export.ts';
import { importText } from './import.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';

const fx = (name: string) => readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), 'utf8');
const TARGETS: [ExportTarget, TrainingExportKind][] = [
  ['native', 'sft'],
  ['agentworldbench', 'sft'],
  ['trl', 'sft'],
  ['verl', 'sft'],
  ['trl', 'rl'],
  ['verl', 'multiturn'],
];

describe('export size estimate', () => {
  it('is within a few percent of what a long trajectory writes, and near it on small files', async () => {
    for (const [file, tolerance] of [
      ['native/hundred-turns.jsonl', 0.12],
      ['native/trajectories.jsonl', 0.35],
      ['openai/tool_calls.jsonl', 0.35],
    ] as const) {
      const { trajectories } = await importText(fx(file), { keepRaw: false });
      for (const [target, kind] of TARGETS) {
        let written = 0;
        for (const l of exportLines(target, trajectories, { kind })) written += l.length + 1;
        const ratio = estimateExportChars(target, trajectories, { kind }) / written;
        expect(Math.abs(ratio - 1), `${file} ${target} ${kind}`).toBeLessThan(tolerance);
      }
    }
  });

  it('warns, saying how big, when one 10,000-turn trajectory would be gigabytes as AgentWorldBench or SFT rows', () => {
    const turns = Array.from({ length: 10_000 }, (_, i) => ({ action: `cat file${i}.txt`, observation: 'line of output '.repeat(3) }));
    const t: Trajectory = { id: 'long', domain: 'terminal', system_prompt: emptySystemPrompt(), turns };
    expect(exportSizeWarning('agentworldbench', [t])).toMatch(
      /^this export will be about \d+(\.\d)? GB \(AgentWorldBench records repeat each trajectory's history in every turn\)$/,
    );
    expect(exportSizeWarning('trl', [t], { kind: 'sft' })).toMatch(/GB \(SFT rows repeat/);
    expect(exportSizeWarning('native', [t])).toBeUndefined();
    expect(exportSizeWarning('verl', [t], { kind: 'rl' })).toBeUndefined();
    expect(exportSizeWarning('agentworldbench', [{ ...t, turns: turns.slice(0, 100) }])).toBeUndefined();
  });
});
