// The whole AgentWorldBench protocol on the command line, through standard streams as a shell
// pipe would run it: lwm infer (the two baselines) | lwm judge - --judge local | lwm score -.
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';
import { generateTrajectories } from '../../envs/generate.ts';

async function lwm(args: string[], stdin: string[] = []) {
  const io = captureIO(stdin);
  const code = await main(args, io);
  return { code, out: io.stdout, err: io.stderr };
}

const outLines = (text: string) => text.split('\n').filter((l) => l.trim());

describe('infer → judge → score', () => {
  it('scores the reference above copy-last, and its verifier exact-match at 100', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-protocol-'));
    try {
      const data = [...generateTrajectories('terminal', 6, 11), ...generateTrajectories('mcp', 6, 11), ...generateTrajectories('search', 6, 11)];
      await writeFile(join(dir, 'data.jsonl'), data.map((t) => JSON.stringify(t)).join('\n') + '\n');
      const totals: Record<string, number> = {};
      const exact: Record<string, number> = {};
      for (const backend of ['copy-last', 'reference']) {
        const pred = await lwm(['infer', join(dir, 'data.jsonl'), '--backend', backend, '--eval-fraction', '0.5', '-o', '-']);
        expect(pred.code).toBe(0);
        const judged = await lwm(['judge', '-', '--judge', 'local'], outLines(pred.out));
        expect(judged.code).toBe(0);
        const records = outLines(judged.out).map((l) => JSON.parse(l));
        expect(records.length).toBe(outLines(pred.out).length);
        expect(records[0].verifier).toMatchObject({ applicable: expect.any(Boolean), pass: expect.any(Number), regions: expect.any(Number) });
        const score = await lwm(['score', '-', '--json'], outLines(judged.out));
        expect(score.code).toBe(0);
        const table = JSON.parse(score.out);
        expect(table.domains.map((d: { domain: string }) => d.domain).sort()).toEqual(['mcp', 'search', 'terminal']);
        totals[backend] = table.overall.total;
        expect(table.overall.verifier.checked).toBeGreaterThan(0);
        exact[backend] = table.overall.verifier.rate;
        const text = await lwm(['score', '-'], outLines(judged.out));
        expect(text.out.split('\n')[0]).toMatch(/total\s+valid\s+failed\s+exact\s+checked$/);
      }
      expect(totals.reference).toBeGreaterThan(totals['copy-last']);
      expect(exact.reference).toBe(100);
      expect(exact['copy-last']).toBeLessThan(100);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
