// `lwm train` settings that are checked before any data is read or the GPU starts.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import train from './train.ts';

const run = (...a: string[]) => train(a, captureIO());

describe('lwm train reward settings', () => {
  it('offers the three rewards of the method and the two judges, and says what is wrong', async () => {
    await expect(run('--stage', 'rl', '--reward', 'closest')).rejects.toThrow(/--reward must be rubric, reference-ab or turing; got 'closest'/);
    await expect(run('--stage', 'rl', '--reward-judge', 'oracle')).rejects.toThrow(/--reward-judge must be local or endpoint/);
    await expect(run('--stage', 'rl', '--reward-judge', 'endpoint', '--judge-model', 'm')).rejects.toThrow(
      /--reward-judge endpoint needs --judge-base-url and --judge-model/,
    );
    await expect(run('--stage', 'sft', '--reward', 'turing')).rejects.toThrow(/--reward is for --stage rl/);
    await expect(run('--stage', 'sft', '--eval-samples', '4')).rejects.toThrow(/--eval-samples is for --stage rl/);
    await expect(run('--stage', 'rl', '--eval-samples', '0')).rejects.toThrow(UsageError);
    const help = captureIO();
    expect(await train(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('--reward rubric|reference-ab|turing');
    expect(help.stdout).toContain('--reward-judge local|endpoint');
    expect(help.stdout).toContain('--labels LABELS.jsonl');
  });
});

describe('lwm train --rows', () => {
  it('takes turn or trajectory rows for SFT, and says what is wrong otherwise', async () => {
    await expect(run('--stage', 'sft', '--rows', 'episodes')).rejects.toThrow(/--rows must be turn or trajectory; got 'episodes'/);
    await expect(run('--stage', 'cpt', '--rows', 'trajectory')).rejects.toThrow(/--rows is for --stage sft/);
    await expect(run('--stage', 'rl', '--rows', 'turn')).rejects.toThrow(/--rows is for --stage sft/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--rows', 'turn')).rejects.toThrow(/drop --rows/);
    const help = captureIO();
    expect(await train(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('--rows turn|trajectory');
  }, 60_000);
});

describe('lwm train --answer-room', () => {
  it('takes a whole number for SFT, and says what is wrong otherwise', async () => {
    await expect(run('--stage', 'sft', '--answer-room', '0')).rejects.toThrow(/--answer-room/);
    await expect(run('--stage', 'sft', '--answer-room', 'many')).rejects.toThrow(/--answer-room/);
    await expect(run('--stage', 'cpt', '--answer-room', '64')).rejects.toThrow(/--answer-room is for --stage sft/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--answer-room', '64')).rejects.toThrow(/drop --answer-room/);
    const help = captureIO();
    expect(await train(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('--answer-room N');
  }, 60_000);
});

describe('lwm train LoRA settings', () => {
  it('checks --lora, --lora-alpha and --lora-targets before anything runs', async () => {
    await expect(run('--stage', 'sft', '--lora', '0', '--from', '.')).rejects.toThrow(/--lora must be a rank from 1 to 4096, got '0'/);
    await expect(run('--stage', 'sft', '--lora', '2.5', '--from', '.')).rejects.toThrow(/--lora must be a rank/);
    await expect(run('--stage', 'sft', '--lora-alpha', '8')).rejects.toThrow(/--lora-alpha and --lora-targets need --lora R/);
    await expect(run('--stage', 'sft', '--lora', '8', '--lora-alpha=-1', '--from', '.')).rejects.toThrow(/--lora-alpha must be a number above 0/);
    await expect(run('--stage', 'sft', '--lora', '8', '--from', 'package.json')).rejects.toThrow(/--lora needs --from HF_FOLDER/);
    await expect(run('--stage', 'sft', '--weights', 'f16', '--from', '.')).rejects.toThrow(
      /--weights holds frozen weights in f16: it is for the base under --lora R/,
    );
    await expect(run('--stage', 'sft', '--lora', '8', '--weights', 'bf16', '--from', '.')).rejects.toThrow(/--weights must be f32 or f16, got 'bf16'/);
    await expect(run('--stage', 'sft', '--lora', '8')).rejects.toThrow(UsageError);
    const help = captureIO();
    expect(await train(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('--lora R [--lora-alpha A] [--lora-targets q,k,v,o,gate,up,down]');
  });
});

describe('lwm train --recipe', () => {
  it('takes one built-in domain and nothing the recipe sets itself, checked before any data is made', async () => {
    await expect(run('--recipe', 'slow', '--domain', 'terminal')).rejects.toThrow(/--recipe: unknown recipe 'slow'; known: quick/);
    await expect(run('--recipe', 'quick')).rejects.toThrow(/--recipe needs one --domain, one of .*terminal/);
    await expect(run('--recipe', 'quick', '--domain', 'cooking')).rejects.toThrow(/--recipe needs one --domain.*; got cooking/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--domain', 'mcp')).rejects.toThrow(/--recipe needs one --domain/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--steps', '10', '--preset', 'mini')).rejects.toThrow(
      /--recipe quick sets the stage, model, data, steps and schedule itself; drop --preset, --steps/,
    );
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--data', 'x.jsonl')).rejects.toThrow(/drop --data/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--tasks', 'record_env')).rejects.toThrow(
      /--tasks: task family 'terminal\/record_env' has no probe.*families with one: write_word/,
    );
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '--tasks', 'nope')).rejects.toThrow(/--tasks: no task family 'nope' in domain 'terminal'/);
    await expect(run('--stage', 'sft', '--tasks', 'write_word')).rejects.toThrow(/--tasks adds task-play data to a --recipe run/);
    await expect(run('--recipe', 'quick', '--domain', 'terminal', '-o', '/nonexistent-dir/x.safetensors')).rejects.toThrow(/nonexistent-dir/);
    const help = captureIO();
    expect(await train(['--help'], help)).toBe(0);
    expect(help.stdout).toContain('lwm train --recipe quick --domain D [--tasks F[,F…]|probed]');
  }, 60_000); // the recipe's modules load on first use: slow on a loaded machine
});
