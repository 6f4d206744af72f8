// `lwm agent train` settings that are checked before the GPU starts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileError, UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import agent from './agentTrain.ts';

const run = (...a: string[]) => agent(a, captureIO());
const base = ['train', '--env', 'real', '--domain', 'terminal', '--families', 'write_word'];

describe('lwm agent train settings', () => {
  it('says what is wrong with each setting, before any training', async () => {
    await expect(run('play')).rejects.toThrow(/unknown subcommand 'play'/);
    await expect(run('train', '--env', 'dream', '--domain', 'terminal', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--env must be real or model/);
    await expect(run('train', '--domain', 'terminal', '--families', 'write_word', '--world', 'w', '-o', 'x')).rejects.toThrow(/--world goes with --env model/);
    await expect(run('train', '--env', 'model', '--domain', 'terminal', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--env model needs --world M/);
    await expect(run('train', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--domain is required/);
    await expect(run('train', '--domain', 'moon', '--families', 'write_word', '-o', 'x')).rejects.toThrow(/--domain must be one of/);
    await expect(run('train', '--domain', 'terminal', '-o', 'x')).rejects.toThrow(/--families is required/);
    await expect(run('train', '--domain', 'terminal', '--families', 'write_word,', '-o', 'x')).rejects.toThrow(/--families has an empty name/);
    await expect(run('train', '--domain', 'terminal', '--families', 'fly_kite', '-o', 'x')).rejects.toThrow(
      /no task family 'fly_kite' in terminal; families: write_word, make_dir/,
    );
    await expect(run(...base)).rejects.toThrow(/-o OUT is required/);
    await expect(run(...base, '-o', 'x', '--group', '1')).rejects.toThrow(/--group must be an integer from 2/);
    await expect(run(...base, '-o', 'x', '--sft-steps', 'many')).rejects.toThrow(UsageError);
    await expect(run(...base, '-o', 'x', '--temperature', '0')).rejects.toThrow(/--temperature must be a number above 0/);
    await expect(run(...base, '-o', 'x', '--rl-lr', 'fast')).rejects.toThrow(/--rl-lr must be a number/);
    await expect(run(...base, '-o', 'x', '--layout', 'wide')).rejects.toThrow(/--layout must be one of full, compact, got 'wide'/);
    await expect(run(...base, '-o', 'x', '--policy', '/nonexistent/policy.safetensors')).rejects.toThrow(FileError);
    const dir = mkdtempSync(join(tmpdir(), 'lwm-agent-'));
    const file = join(dir, 'taken');
    writeFileSync(file, 'x');
    await expect(run(...base, '-o', file)).rejects.toThrow(/is a file; -o names the folder/);
  });
  it('explains itself', async () => {
    const io = captureIO();
    expect(await agent(['train', '--help'], io)).toBe(0);
    expect(io.stdout).toContain('--env real');
    expect(io.stdout).toContain('--rl-steps N');
    expect(await agent([], captureIO())).toBe(2);
  });
});
