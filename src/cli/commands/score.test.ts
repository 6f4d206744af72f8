import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import score from './score.ts';
import { UsageError } from '../io.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureIO } from '../testing.ts';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Fixtures written by the public AgentWorldBench scorer (scripts/fixtures/agentworldbench-scorer.py).
const awbFixture = (name: string) => fileURLToPath(new URL(`../../core/bench/fixtures/${name}`, import.meta.url));

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => (tmp = await tempDir()));
afterEach(async () => tmp.done());

function rec(task: string, s: number[] | null, total?: number) {
  const base = { task, id: Math.random().toString(36).slice(2), turn_idx: 1, prompt: ['a'], response: ['o'], gen: 'g', strengths: [], weaknesses: [] };
  if (!s) return { ...base, failed: true, format: 0, factuality: 0, consistency: 0, realism: 0, quality: 0, total_score: 0 };
  const [format, factuality, consistency, realism, quality] = s;
  return { ...base, failed: false, format, factuality, consistency, realism, quality, total_score: total ?? s.reduce((a, b) => a + b) / 5 };
}

describe('lwm score', () => {
  it('prints the per-domain table with the public formula, to two decimals', async () => {
    const rows = [
      rec('terminal', [5, 4, 5, 5, 5]),
      rec('terminal', [3, 2, 4, 4, 3]),
      rec('terminal', null),
      rec('search', [2, 1, 3, 2, 2]),
      rec('search', [4, 4, 4, 4, 3]),
    ];
    await writeFile(tmp.path('j.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const io = captureIO();
    expect(await score([tmp.path('j.jsonl')], io)).toBe(0);
    // By hand: terminal totals 4.8, 3.2 → mean 4 → 75.00; search totals 2.0, 3.8 → 2.9 → 47.50;
    // overall (4.8 + 3.2 + 2.0 + 3.8) / 4 = 3.45 → 61.25. The failed record's zeros are ignored.
    expect(io.stdout).toMatch(/search\s+50\.00\s+37\.50\s+62\.50\s+50\.00\s+37\.50\s+47\.50\s+2\s+0/);
    expect(io.stdout).toMatch(/terminal\s+75\.00\s+50\.00\s+87\.50\s+87\.50\s+75\.00\s+75\.00\s+2\s+1/);
    expect(io.stdout).toMatch(/overall\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+61\.25\s+4\s+1/);
    const json = captureIO();
    expect(await score([tmp.path('j.jsonl'), '--json'], json)).toBe(0);
    expect(JSON.parse(json.stdout).overall.total).toBeCloseTo(61.25, 10);
  });

  it('reports bad records as file:line and exits 1', async () => {
    await writeFile(
      tmp.path('bad.jsonl'),
      `${JSON.stringify(rec('os', [1, 1, 1, 1, 1]))}\n{oops\n${JSON.stringify({ ...rec('os', [1, 1, 1, 1, 1]), quality: 'high' })}\n`,
    );
    const io = captureIO();
    expect(await score([tmp.path('bad.jsonl')], io)).toBe(1);
    const lines = io.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/bad\.jsonl:2: not valid JSON/);
    expect(lines[1]).toMatch(/bad\.jsonl:3: "quality" must be a number/);
    await writeFile(tmp.path('f.jsonl'), JSON.stringify({ ...rec('os', [1, 1, 1, 1, 1]), failed: 'no' }) + '\n');
    const f = captureIO();
    expect(await score([tmp.path('f.jsonl')], f)).toBe(1);
    expect(f.stderr).toContain('f.jsonl:1: "failed" must be a boolean or a number');
    expect(await score([tmp.path('missing.jsonl')], captureIO())).toBe(1);
  });

  it("accepts the public scorer's failed records: numeric failed, no score fields, missing failed counted as failed", async () => {
    const { format, factuality, consistency, realism, quality, total_score, ...bare } = rec('terminal', [1, 1, 1, 1, 1]);
    void [format, factuality, consistency, realism, quality, total_score];
    const rows = [
      { ...rec('agentworldbench/terminal', [5, 4, 5, 5, 5]), failed: 0.0 },
      { ...bare, task: 'agentworldbench/terminal', failed: 1.0, error_message: 'No model generation' },
      { ...bare, task: 'terminal', failed: undefined },
    ];
    await writeFile(tmp.path('p.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const io = captureIO();
    expect(await score([tmp.path('p.jsonl'), '--format', 'official'], io)).toBe(0);
    expect(io.stdout).toContain('--- Terminal (1/3 valid, 2 failed) ---');
    expect(io.stdout).toContain('Total samples: 3, Valid: 1, Failed: 2');
    await expect(score([tmp.path('p.jsonl'), '--format', 'csv'], captureIO())).rejects.toBeInstanceOf(UsageError);
  });

  it("reports the verifier's exact-match rate per domain where records carry its verdict", async () => {
    const v = (pass: number, applicable = true) => ({ verifier: { pass, applicable, rule: 'spans', regions: 1 } });
    const rows = [
      { ...rec('terminal', [5, 4, 5, 5, 5]), ...v(1) },
      { ...rec('terminal', [3, 2, 4, 4, 3]), ...v(0) },
      { ...rec('terminal', null), ...v(1) }, // a failed judgement: the verifier's verdict still counts
      { ...rec('terminal', [3, 3, 3, 3, 3]), ...v(1, false) }, // nothing deterministic to check
      rec('search', [2, 1, 3, 2, 2]), // no verdict
    ];
    await writeFile(tmp.path('v.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const io = captureIO();
    expect(await score([tmp.path('v.jsonl')], io)).toBe(0);
    const [head, , ...body] = io.stdout.trim().split('\n');
    expect(head).toMatch(/failed\s+exact\s+checked$/);
    expect(body.find((l) => l.startsWith('terminal'))).toMatch(/\s3\s+1\s+66\.67\s+3$/);
    expect(body.find((l) => l.startsWith('search'))).toMatch(/\s-\s+0$/);
    expect(body.find((l) => l.startsWith('overall'))).toMatch(/\s66\.67\s+3$/);
    const json = captureIO();
    await score([tmp.path('v.jsonl'), '--json'], json);
    expect(JSON.parse(json.stdout).domains.find((d: { domain: string }) => d.domain === 'terminal').verifier).toEqual({
      checked: 3,
      matched: 2,
      rate: (2 / 3) * 100,
    });
    // Without verdicts the table is as before: no exact-match columns.
    const plain = captureIO();
    await writeFile(tmp.path('p.jsonl'), JSON.stringify(rec('os', [2, 2, 2, 2, 2])) + '\n');
    await score([tmp.path('p.jsonl')], plain);
    expect(plain.stdout.split('\n')[0]).toMatch(/valid\s+failed$/);
  });

  it('reads standard input for -', async () => {
    const io = captureIO([JSON.stringify(rec('os', [5, 5, 5, 5, 5])), '']);
    expect(await score(['-'], io)).toBe(0);
    expect(io.stdout).toMatch(/os\s+100\.00/);
  });

  it('treats a missing file argument as a usage error', async () => {
    await expect(score([], captureIO())).rejects.toBeInstanceOf(UsageError);
  });
});

async function tempDir(): Promise<{ dir: string; path: (name: string) => string; done: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'lwm-judge-'));
  return { dir, path: (n) => join(dir, n), done: () => rm(dir, { recursive: true, force: true }) };
}

describe('lwm score --format official against the public scorer', () => {
  it('prints exactly what the public scorer printed for the judged file its judge wrote', async () => {
    // Numeric failed (1.0 / 0.0), prefixed tasks (agentworldbench/terminal), a 0 score, a missing
    // dimension, failed records without score fields, an empty generation, a verdict with no scores.
    const io = captureIO();
    expect(await score([awbFixture('awb-public-judged.jsonl'), '--format', 'official'], io)).toBe(0);
    expect(io.stderr).toBe('');
    expect(io.stdout).toBe(readFileSync(awbFixture('awb-public-judged.score.txt'), 'utf8'));
  });

  it('prints the same official report when the records carry verifier verdicts (an extra field the public scorer ignores)', async () => {
    const text = readFileSync(awbFixture('awb-public-judged.jsonl'), 'utf8');
    const withVerdicts = text
      .split('\n')
      .filter((l) => l.trim())
      .map((l, i) => JSON.stringify({ ...JSON.parse(l), verifier: { pass: i % 2, applicable: true, rule: 'spans', regions: 1 } }))
      .join('\n');
    await writeFile(tmp.path('v.jsonl'), withVerdicts + '\n');
    const io = captureIO();
    expect(await score([tmp.path('v.jsonl'), '--format', 'official'], io)).toBe(0);
    expect(io.stdout).toBe(readFileSync(awbFixture('awb-public-judged.score.txt'), 'utf8'));
  });

  it('prints exactly what the public scorer printed for edge-case records', async () => {
    // Boolean and integer failed, a missing failed, a valid record without total_score, a rounding
    // tie (3.125 prints 3.12), totals whose float sum is not the exact sum.
    const io = captureIO();
    expect(await score([awbFixture('awb-public-edge.jsonl'), '--format', 'official'], io)).toBe(0);
    expect(io.stdout).toBe(readFileSync(awbFixture('awb-public-edge.score.txt'), 'utf8'));
  });
});
