// Which commands bin/lwm.mjs starts with the Vulkan environment: every command of main.ts has an
// entry in gpuUse.ts and cases here, so a new command cannot run without the decision.
import { describe, expect, it } from 'vitest';
import { GPU_USE, needsGpu } from './gpuUse.ts';
import { commandNames } from './main.ts';

const FOLDER = 'src/model/fixtures/hf/llama-chat';

/** Per command: arguments, and whether they open a device. */
const CASES: Record<string, [string[], boolean][]> = {
  validate: [[['data.jsonl'], false]],
  convert: [[['data.jsonl', '--to', 'agentworldbench'], false]],
  expand: [[['data.jsonl', '--seed', '1'], false]],
  mask: [[['data.jsonl'], false]],
  tokenizer: [[['train', 'data.jsonl', '-o', 'tok.json'], false]],
  tokenize: [[['--model', FOLDER, '--text', 'hi'], false]],
  gen: [[['--domain', 'terminal', '--n', '2', '--seed', '0'], false]],
  env: [[['terminal', '--seed', '0'], false]],
  generate: [
    [['--model', FOLDER, '--prompt', 'hi'], true],
    [['--model', 'ck.safetensors', '--backend', 'wgsl', '--prompt', 'hi'], true],
    [['--model', 'onnx-folder', '--backend', 'onnx', '--prompt', 'hi'], false],
    [['--model', 'onnx-folder', '--backend=onnx', '--prompt', 'hi'], false],
  ],
  infer: [
    [['records.jsonl', '--backend', 'local', '--model', 'ck.safetensors'], true],
    [['records.jsonl', '--backend=local', '--model', 'ck.safetensors'], true],
    [['records.jsonl', '--backend', 'onnx', '--model', 'dir'], false],
    [['records.jsonl', '--backend', 'endpoint', '--base-url', 'http://127.0.0.1:8000/v1', '--model', 'm'], false],
    [['records.jsonl', '--backend', 'copy-last'], false],
    [['records.jsonl', '--backend', 'reference'], false],
    [['records.jsonl', '--', '--backend', 'local'], false],
  ],
  judge: [
    [['pred.jsonl', '--judge', 'local'], false],
    [['pred.jsonl', '--judge', 'endpoint', '--base-url', 'http://127.0.0.1:8000/v1', '--model', 'm'], false],
  ],
  optimize: [
    [['--template', 'v0', '--domain', 'terminal', '--backend', 'local', '--model', 'ck.safetensors', '-o', 'out'], true],
    [['--template', 'v0', '--domain', 'terminal', '--backend', 'copy-last', '-o', 'out'], false],
    [['--template', 'v0', '--domain', 'terminal', '--backend', 'onnx', '--model', 'dir', '-o', 'out'], false],
    // Resumed without --backend: the run's own simulator, which may be local.
    [['--resume', '-o', 'out'], true],
    [['--resume', '--backend', 'reference', '-o', 'out'], false],
  ],
  serve: [
    [['--model', 'ck.safetensors'], true],
    [['--model', FOLDER, '--port', '0'], true],
    [['--model', 'copy-last'], false],
    [['--model=copy-last'], false],
    [['--envs', '--port', '0'], false],
    [['--envs', '--model', 'ck.safetensors'], true],
  ],
  score: [[['judged.jsonl'], false]],
  agree: [[['a.jsonl', 'b.jsonl'], false]],
  labels: [
    [['--teacher', 'local', '--from', 'ck.safetensors', '-o', 'labels.jsonl'], true],
    [['--teacher', 'endpoint', '--base-url', 'http://127.0.0.1:8000/v1', '--model', 'm', '-o', 'labels.jsonl'], false],
  ],
  train: [
    [['--stage', 'cpt', '-o', 'ck.safetensors'], true],
    [['--from', FOLDER, '--stage', 'sft', '-o', 'out'], true],
  ],
  agent: [[['train', '--env', 'real', '--domain', 'terminal', '--families', 'write_word', '-o', 'out'], true]],
  export: [
    [['ck.safetensors', '--to', 'hf', '-o', 'out'], false],
    [['ck.safetensors', '--to', 'onnx', '-o', 'out'], false],
    [[FOLDER, '--to', 'onnx', '-o', 'out'], false],
    [['adapter-folder', '--to', 'hf', '--unmerged', '-o', 'out'], false],
  ],
  gpu: [[[], true]],
};

describe('which commands need the GPU', () => {
  it('every command of the CLI has an entry and cases, and nothing else does', () => {
    const commands = commandNames();
    expect(commands.length).toBeGreaterThan(10);
    expect(Object.keys(GPU_USE).sort()).toEqual([...commands].sort());
    expect(Object.keys(CASES).sort()).toEqual([...commands].sort());
  });

  it.each(Object.entries(CASES))('%s', (name, cases) => {
    for (const [args, want] of cases) expect(needsGpu([name, ...args]), `lwm ${name} ${args.join(' ')}`).toBe(want);
  });

  it('usage, help and unknown commands start no GPU', () => {
    for (const argv of [[], ['--help'], ['help'], ['frobnicate'], ['toString'], ['__proto__']]) expect(needsGpu(argv), argv.join(' ')).toBe(false);
  });
});
