// `lwm agent train` settings that are checked before the GPU starts.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileError, UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import agent, { readState, worldRef, writeState } from './agentTrain.ts';
import { newAgentExperiment } from '../../train/agent/experiment.ts';
import { AGENT_DEFAULTS } from '../../train/agent/run.ts';

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
    await expect(run(...base, '-o', 'x', '--rl-warmup', '1.5')).rejects.toThrow(/--rl-warmup must be an integer from 0/);
    await expect(run(...base, '-o', 'x', '--layout', 'wide')).rejects.toThrow(/--layout must be one of full, compact, got 'wide'/);
    await expect(run(...base, '-o', 'x', '--policy', '/nonexistent/policy.safetensors')).rejects.toThrow(FileError);
    await expect(run(...base, '-o', 'x', '--lora', '4')).rejects.toThrow(/--lora needs --policy HF_FOLDER/);
    await expect(run(...base, '-o', 'x', '--memory-gib', '2')).rejects.toThrow(/--memory-gib goes with --policy HF_FOLDER/);
    const adapter = mkdtempSync(join(tmpdir(), 'lwm-adapter-'));
    writeFileSync(join(adapter, 'adapter_config.json'), '{"r": 2}');
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--lora', '4')).rejects.toThrow(/is an adapter folder, which goes on with its own settings/);
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--lora', '0')).rejects.toThrow(/--lora must be a rank from 1/);
    await expect(run(...base, '-o', 'x', '--policy', adapter, '--memory-gib', 'lots')).rejects.toThrow(/--memory-gib must be a number above 0/);
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

  it('checks the experiment settings and a stored experiment before any training', async () => {
    const exp = ['experiment', '--domain', 'terminal', '--families', 'write_word'];
    await expect(run('fly')).rejects.toThrow(/try: lwm agent train, lwm agent experiment/);
    await expect(run(...exp, '--arms', 'real,moon', '-o', 'x')).rejects.toThrow(
      /--arms: unknown arm 'moon'; arms: imitation, real, shuffled, model, model-real/,
    );
    await expect(run(...exp, '-o', 'x')).rejects.toThrow(/--world M is required for the model arms/);
    await expect(run(...exp, '--arms', 'real,model-real', '--world', 'copy-last', '-o', 'x')).rejects.toThrow(/'model-real' goes on from the 'model' arm/);
    await expect(run(...exp, '--arms', 'real', '--env', 'real', '-o', 'x')).rejects.toThrow(/--env goes with lwm agent train/);
    await expect(run(...exp, '--arms', 'real', '--rl-steps', '0', '-o', 'x')).rejects.toThrow(/RL arms need rlSteps ≥ 1/);
    await expect(run(...base, '-o', 'x', '--resume')).rejects.toThrow(/--arms and --resume go with lwm agent experiment/);
    const ckpt = join(mkdtempSync(join(tmpdir(), 'lwm-policy-')), 'policy.safetensors');
    writeFileSync(ckpt, 'bytes');
    await expect(run(...exp, '--arms', 'real', '--policy', ckpt, '-o', 'x')).rejects.toThrow(
      /an experiment trains its policy from a preset .* or a Hugging Face folder/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'lwm-exp-'));
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(/experiment.json: cannot read the experiment to resume/);
    writeFileSync(join(dir, 'experiment.json'), '{"version": 1, "arms": [], "spec": {}, "imitation": "../../etc/passwd.safetensors"}');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(
      /names a policy file "..\/..\/etc\/passwd.safetensors" outside its folder/,
    );
    writeFileSync(join(dir, 'experiment.json'), '[1, 2');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(FileError);
    writeFileSync(join(dir, 'experiment.json'), '{"version": 7}');
    await expect(run(...exp, '--arms', 'real', '--resume', '-o', dir)).rejects.toThrow(/not an experiment saved by lwm agent experiment/);
    await expect(run(...exp, '--arms', 'real', '--rl-steps', '2', '-o', dir)).rejects.toThrow(/an experiment is already there; go on with --resume/);
    const io = captureIO();
    expect(await agent(['experiment', '--help'], io)).toBe(0);
    expect(io.stdout).toContain('lwm agent experiment --world M');
  });

  it('stores an experiment as JSON beside its policies and reads back the same state, the newest cursor only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-exp-state-'));
    const s = newAgentExperiment({ train: { ...AGENT_DEFAULTS, domain: 'terminal', families: ['write_word'] }, arms: ['imitation', 'real'] });
    s.untrained = { phase: 'untrained', step: 0, success: 0, successes: 0, n: 32, format: 0, turns: 0 };
    s.imitation = Uint8Array.from([1, 2, 3]);
    s.cursor = { arm: 1, step: 5, checkpoint: Uint8Array.from([4, 5]) };
    const written = new Set<string>();
    writeState(dir, s, written);
    expect(readState(dir)).toEqual(s);
    const next = { ...s, cursor: { arm: 1, step: 10, checkpoint: Uint8Array.from([6]) } };
    writeState(dir, next, written);
    expect(readState(dir)).toEqual(next);
    expect(readdirSync(dir).sort()).toEqual(['cursor-1-10.safetensors', 'experiment.json', 'imitation.safetensors']);
    // The imitation policy, set once, is not written again at the next save.
    writeFileSync(join(dir, 'imitation.safetensors'), Uint8Array.from([9]));
    writeState(dir, next, written);
    expect([...readFileSync(join(dir, 'imitation.safetensors'))]).toEqual([9]);
  });
});

describe('lwm agent probe settings', () => {
  it('needs a world model checkpoint, a domain and families with a probe, checked before the GPU starts', async () => {
    const base = ['probe', '--domain', 'terminal', '--families', 'write_word'];
    await expect(run('probe', '--domain', 'terminal', '--families', 'write_word')).rejects.toThrow(/--world CKPT\|ONNX_DIR is required/);
    await expect(run(...base, '--world', 'copy-last')).rejects.toThrow(/--world CKPT\|ONNX_DIR is required/);
    await expect(run('probe', '--world', 'w.safetensors', '--families', 'write_word')).rejects.toThrow(/--domain must be one of/);
    await expect(run('probe', '--world', 'w.safetensors', '--domain', 'terminal')).rejects.toThrow(/--families is required/);
    await expect(run('probe', '--world', 'w.safetensors', '--domain', 'terminal', '--families', 'record_env')).rejects.toThrow(
      /'terminal\/record_env' has no probe; families with one: terminal\/write_word/,
    );
    await expect(run(...base, '--world', 'w.safetensors', '--eval-tasks', '0')).rejects.toThrow(UsageError);
    const help = captureIO();
    expect(await agent(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('lwm agent probe --world CKPT');
  });
});

describe('--world', () => {
  it('names copy-last, an ONNX export (a folder holding onnx/) or a checkpoint of ours', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lwm-world-ref-'));
    mkdirSync(join(dir, 'export', 'onnx'), { recursive: true });
    mkdirSync(join(dir, 'plain'));
    expect(worldRef('copy-last')).toEqual({ kind: 'copy-last' });
    expect(worldRef(join(dir, 'export'))).toEqual({ kind: 'onnx', onnx: { folderId: join(dir, 'export'), name: 'export', execution: 'wasm' } });
    // Anything else is a checkpoint: opening it says what is wrong (a folder, a missing file).
    writeFileSync(join(dir, 'ckpt.safetensors'), '');
    for (const w of [join(dir, 'plain'), join(dir, 'w.safetensors'), join(dir, 'ckpt.safetensors')])
      expect(worldRef(w)).toEqual({ kind: 'checkpoint', checkpoint: { key: w, label: w } });
  });
});
