// `lwm generate`'s argument errors: exit 2 with one line naming the problem, before any model or
// GPU is touched (the generation itself: generate.gpu.test.ts).
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';
import { parseGenerateArgs } from './generate.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(['generate', ...argv], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('lwm generate arguments', () => {
  it.each([
    [['--prompt', 'hi'], /--model PATH is required/],
    [['--model', FOLDER], /exactly one of --prompt TEXT and --chat TEXT/],
    [['--model', FOLDER, '--prompt', 'a', '--chat', 'b'], /exactly one of --prompt TEXT and --chat TEXT/],
    [['--model', FOLDER, '--prompt', 'a', '--backend', 'cuda'], /--backend must be wgsl or onnx/],
    [['--model', FOLDER, '--prompt', 'a', '--backend', 'wgsl', '--variant', 'fp16'], /--variant is for --backend onnx/],
    [['--model', FOLDER, '--prompt', 'a', '--max-tokens', '0'], /--max-tokens must be an integer from 1/],
    [['--model', FOLDER, '--prompt', 'a', '--max-tokens', '1e3'], /--max-tokens must be an integer/],
    [['--model', FOLDER, '--prompt', 'a', '--temperature=-1'], /--temperature must be a number in \[0, 100\]/],
    [['--model', FOLDER, '--prompt', 'a', '--top-p', '0'], /--top-p must be a number in \(0, 1\]/],
    [['--model', FOLDER, '--prompt', 'a', '--top-k', 'x'], /--top-k must be an integer/],
    [['--model', FOLDER, '--prompt', 'a', '--seed=-3'], /--seed must be an integer from 0/],
    [['--model', FOLDER, '--prompt', 'a', '--memory-gib', '0'], /--memory-gib must be a number/],
    [['--model', FOLDER, '--prompt', 'a', '--weights', 'f8'], /--weights must be f32 or f16, got "f8"/],
    [['--model', FOLDER, '--prompt', 'a', '--weights', 'f16', '--backend', 'onnx'], /--weights is for --backend wgsl/],
    [['--model', FOLDER, '--prompt', 'a', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['--model', FOLDER, '--prompt', 'a', 'extra'], /unexpected argument 'extra'/],
    [['--model', 'notes.txt', '--prompt', 'a'], /cannot be opened/],
  ])('%j: exits with one line', async (argv, message) => {
    const r = await run(...argv);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(message.source.includes('cannot be opened') ? 1 : 2);
  });

  it('a file that is neither a checkpoint nor a folder is a usage error', async () => {
    const r = await run('--model', fileURLToPath(new URL('./generate.ts', import.meta.url)), '--prompt', 'a');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/must be a \.safetensors checkpoint or a Hugging Face model folder/);
  });

  it('defaults: greedy, 64 tokens, wgsl; --help prints the usage', async () => {
    expect(parseGenerateArgs(['--model', 'm', '--chat', 'hi'])).toMatchObject({
      input: { kind: 'chat', text: 'hi' },
      maxTokens: 64,
      sampling: { temperature: 0 },
      json: false,
    });
    expect(
      parseGenerateArgs(['--model', 'm', '--prompt', 'x', '--temperature', '0.7', '--top-k', '5', '--top-p', '0.9', '--seed', '3', '--json']),
    ).toMatchObject({
      sampling: { temperature: 0.7, topK: 5, topP: 0.9, seed: 3 },
      json: true,
    });
    const r = await run('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: lwm generate');
  });
});
