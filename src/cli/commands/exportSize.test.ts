// lwm convert warns before an export whose size explodes; the threshold is lowered here so the
// test writes kilobytes, not gigabytes.
import { describe, expect, it, vi } from 'vitest';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

vi.mock('../../core/limits.ts', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../core/limits.ts')>();
  return { ...m, LIMITS: { ...m.LIMITS, exportWarnChars: 50_000 } };
});

const fx = (name: string) => fileURLToPath(new URL(`../../core/formats/fixtures/${name}`, import.meta.url));

describe('lwm convert export size', () => {
  it('warns on stderr with the estimated size, then writes the export', async () => {
    const io = captureIO();
    expect(await main(['convert', fx('native/hundred-turns.jsonl'), '--to', 'agentworldbench'], io)).toBe(0);
    expect(io.stderr).toMatch(
      /^lwm convert: warning: this export will be about 2\.\d MB \(AgentWorldBench records repeat each trajectory's history in every turn\)\n$/,
    );
    expect(io.stdout.trim().split('\n')).toHaveLength(100);
    const native = captureIO();
    expect(await main(['convert', fx('native/hundred-turns.jsonl'), '--to', 'native'], native)).toBe(0);
    expect(native.stderr).toMatch(/^lwm convert: warning: this export will be about 5\d\.\d kB\n$/);
    const small = captureIO();
    expect(await main(['convert', fx('native/trajectories.jsonl'), '--to', 'agentworldbench'], small)).toBe(0);
    expect(small.stderr).toBe('');
  });
});
