import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

describe('lwm gen', () => {
  it('writes the same JSONL for the same arguments, to stdout or a file', async () => {
    const a = captureIO();
    expect(await main(['gen', '--domain', 'terminal', '--n', '3', '--seed', '9'], a)).toBe(0);
    const lines = a.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]).id).toBe('env-terminal-9-00000');
    const file = join(mkdtempSync(join(tmpdir(), 'lwm-gen-')), 'out.jsonl');
    const b = captureIO();
    expect(await main(['gen', '--domain', 'terminal', '--n', '3', '--seed', '9', '-o', file], b)).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(a.stdout);
  });
  it('makes N per domain with --domain all', async () => {
    const io = captureIO();
    expect(await main(['gen', '--domain', 'all', '--n', '1', '--seed', '1'], io)).toBe(0);
    expect(
      io.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).domain),
    ).toEqual(['mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os']);
  });
  it('writes task-play trajectories with --tasks, and refuses a family without a probe or more than one domain', async () => {
    const io = captureIO();
    expect(await main(['gen', '--domain', 'terminal', '--tasks', 'write_word', '--n', '4', '--seed', '2'], io)).toBe(0);
    const ts = io.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(ts.map((t) => t.id)).toEqual(['task-terminal-2-00000', 'task-terminal-2-00001', 'task-terminal-2-00002', 'task-terminal-2-00003']);
    for (const t of ts) expect(t.turns.at(-1).action).toMatch(/^cat \w+\.txt$/);
    for (const [argv, why] of [
      [['--domain', 'terminal', '--tasks', 'record_env'], /--tasks: task family 'terminal\/record_env' has no probe/],
      [['--domain', 'all', '--tasks', 'probed'], /--tasks needs one --domain/],
      [['--domain', 'web', '--tasks', 'probed'], /--tasks: no task family of web has a probe/],
    ] as const) {
      const bad = captureIO();
      expect(await main(['gen', ...argv, '--n', '1', '--seed', '1'], bad)).toBe(2);
      expect(bad.stderr).toMatch(why);
    }
  });
  it('exits 2 on bad usage', async () => {
    for (const argv of [
      ['gen'],
      ['gen', '--domain', 'nope', '--n', '1', '--seed', '1'],
      ['gen', '--domain', 'os', '--n', 'x', '--seed', '1'],
      ['gen', '--domain', 'os', '--n', '1'],
    ]) {
      const io = captureIO();
      expect(await main(argv, io)).toBe(2);
      expect(io.stderr).toMatch(/^lwm gen: /);
    }
  });
});

describe('lwm env', () => {
  it('prints the system prompt, then one JSON line per action', async () => {
    const io = captureIO(['echo hi > a.txt', 'cat a.txt', 'cat missing']);
    expect(await main(['env', 'terminal', '--seed', '3'], io)).toBe(0);
    const lines = io.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(Object.keys(lines[0])).toEqual(['task_description', 'action_space', 'initial_state', 'demonstrations', 'simulation_instruction']);
    expect(lines).toHaveLength(4);
    expect(lines[2].observation.split('\n')[0]).toBe('hi');
    expect(lines[3].observation.split('\n')[0]).toBe('cat: missing: No such file or directory');
    expect(lines[3].spans).toEqual([{ start: 0, end: lines[3].observation.length, kind: 'deterministic' }]);
  });
  it('exits 2 on an unknown domain or a missing seed', async () => {
    expect(await main(['env', 'moon', '--seed', '1'], captureIO())).toBe(2);
    expect(await main(['env', 'mcp'], captureIO())).toBe(2);
  });
});
