// `lwm mask`, `expand` and `validate` on data whose domains and ids are Object.prototype's keys:
// every domain reported with its counts, and nothing written onto Object.prototype.
import { describe, expect, it } from 'vitest';
import { dataset, guardObjectPrototype, jsonl, NAMES, turnsOf } from '../../core/prototypeKeys.fixture.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

guardObjectPrototype();

describe('CLI with prototype key names', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'lwm-proto-'));
  const file = join(tmp, 'proto.jsonl');
  writeFileSync(file, jsonl(dataset()));
  async function run(...argv: string[]) {
    const io = captureIO();
    const code = await main(argv, io);
    return { code, out: io.stdout, err: io.stderr };
  }
  it('lwm mask prints a row per domain', async () => {
    const r = await run('mask', file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const n of NAMES) expect(r.out).toMatch(new RegExp(`\\n${n}\\s+${turnsOf(n)}\\s`));
    const j = JSON.parse((await run('mask', file, '--json')).out);
    for (const n of NAMES) expect(j.perDomain[n].total).toBe(turnsOf(n));
  });
  it('lwm expand reports every domain', async () => {
    const r = await run('expand', file, '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    for (const n of NAMES) expect(j.perDomain[n]).toMatchObject({ trajectories: 1, samples: turnsOf(n) });
    const v = await run('validate', file, '--json');
    expect(v.code).toBe(0);
    expect(JSON.parse(v.out)).toMatchObject({ trajectories: NAMES.length, errors: 0 });
    const text = await run('expand', file);
    expect(text.code).toBe(0);
    for (const n of NAMES) expect(text.out).toContain(n);
  });
});
