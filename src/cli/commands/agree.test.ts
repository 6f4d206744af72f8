import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import agree from './agree.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIO } from '../testing.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => (tmp = await tempDir()));
afterEach(async () => tmp.done());

function file(totals: (number | null)[], extra: Record<string, unknown> = {}) {
  return totals
    .map((t, i) =>
      JSON.stringify({
        task: 'os',
        id: `s${i}`,
        turn_idx: 1,
        prompt: ['a'],
        response: ['o'],
        gen: 'g',
        failed: t === null,
        format: t ?? 0,
        factuality: t ?? 0,
        consistency: t ?? 0,
        realism: t ?? 0,
        quality: t ?? 0,
        total_score: t,
        strengths: [],
        weaknesses: [],
        ...extra,
      }),
    )
    .join('\n');
}

describe('lwm agree', () => {
  it('compares two judges over three models from JUDGE@MODEL=PATH arguments', async () => {
    // Judge A: small 2, mid 3, big 4.5 (means). Judge B: small 2.5, mid 2, big 4 → ranks differ on small/mid.
    const files: [string, string, (number | null)[]][] = [
      ['A', 'small', [2, 2]],
      ['A', 'mid', [3, 3]],
      ['A', 'big', [4, 5]],
      ['B', 'small', [2, 3]],
      ['B', 'mid', [2, 2]],
      ['B', 'big', [4, 4]],
    ];
    const args: string[] = [];
    for (const [j, m, t] of files) {
      await writeFile(tmp.path(`${j}-${m}.jsonl`), file(t));
      args.push(`${j}@${m}=${tmp.path(`${j}-${m}.jsonl`)}`);
    }
    const io = captureIO();
    expect(await agree([...args, '--json'], io)).toBe(0);
    const [pair] = JSON.parse(io.stdout);
    expect(pair.models).toEqual(['big', 'mid', 'small']);
    // Means A (big, mid, small) = 4.5, 3, 2; B = 4, 2, 2.5. Ranks A 3,2,1; B 3,1,2 → Σd² = 2 → ρ = 1 − 12/24 = 0.5.
    expect(pair.spearman).toBeCloseTo(0.5, 12);
    // Pairs: (big,mid) c, (big,small) c, (mid,small) d → τ = 1/3.
    expect(pair.kendallTauB).toBeCloseTo(1 / 3, 12);
    expect(pair.samples).toBe(6);
    const text = captureIO();
    expect(await agree(args, text)).toBe(0);
    expect(text.stdout).toMatch(/A\s+B\s+3\s+6\s+0\.500\s+0\.333/);
  });

  it('reads judge and model from the records, and skips failed samples', async () => {
    await writeFile(
      tmp.path('a.jsonl'),
      file([3, 4, null], { judge: 'local-rubric', model: 'm1' }) + '\n' + file([1, 2], { judge: 'local-rubric', model: 'm2' }),
    );
    await writeFile(tmp.path('b.jsonl'), file([3, 5, 5], { judge: 'judge:big', model: 'm1' }) + '\n' + file([2, 2], { judge: 'judge:big', model: 'm2' }));
    const io = captureIO();
    expect(await agree([tmp.path('a.jsonl'), tmp.path('b.jsonl'), '--json'], io)).toBe(0);
    const [pair] = JSON.parse(io.stdout);
    expect(pair.judges).toEqual(['judge:big', 'local-rubric']);
    expect(pair.samples).toBe(4);
  });

  it("reads the public scorer's records: numeric failed, prefixed tasks matched to plain ones", async () => {
    // Judge A wrote public-style records (failed 1.0 / 0.0, task agentworldbench/os); judge B ours.
    const pub = (totals: (number | null)[]) =>
      file(totals, { judge: 'A', model: 'm1', task: 'agentworldbench/os' })
        .split('\n')
        .map((l) => JSON.stringify({ ...JSON.parse(l), failed: JSON.parse(l).failed ? 1.0 : 0.0 }))
        .join('\n');
    await writeFile(tmp.path('a.jsonl'), pub([3, 4, null]) + '\n' + file([1, 2], { judge: 'A', model: 'm2', task: 'agentworldbench/os', failed: 0 }));
    await writeFile(tmp.path('b.jsonl'), file([3, 5, 5], { judge: 'B', model: 'm1' }) + '\n' + file([2, 2], { judge: 'B', model: 'm2' }));
    const io = captureIO();
    expect(await agree([tmp.path('a.jsonl'), tmp.path('b.jsonl'), '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout)[0].samples).toBe(4);
  });

  it('asks for a judge name when records lack one', async () => {
    await writeFile(tmp.path('x.jsonl'), file([3]));
    await writeFile(tmp.path('y.jsonl'), file([3]));
    const io = captureIO();
    expect(await agree([tmp.path('x.jsonl'), tmp.path('y.jsonl')], io)).toBe(1);
    expect(io.stderr).toMatch(/x\.jsonl:1: the record names no "judge"; pass the file as JUDGE@MODEL=/);
  });
});

async function tempDir(): Promise<{ dir: string; path: (name: string) => string; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lwm-judge-'));
  return { dir, path: (n) => join(dir, n), done: () => rm(dir, { recursive: true, force: true }) };
}
