// `lwm serve` as a user runs it: its flags and what --model names, then the real command in its
// own process on 127.0.0.1 serving the copy-last baseline, used by `lwm infer --backend endpoint`
// (the predictions equal the baseline's own), and stopped by SIGTERM.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemPromptToText } from '../../core/formats/systemPromptText.ts';
import { FileError, UsageError } from '../io.ts';
import { captureIO } from '../testing.ts';
import infer from './infer.ts';
import { parseServeArgs, serveRef } from './serve.ts';

const LWM = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));
const HF_FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama', import.meta.url));

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'lwm-serve-'));
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

describe('lwm serve: arguments', () => {
  it('defaults: 127.0.0.1:8000, no key, no CORS; the key may come from LWM_SERVE_API_KEY', () => {
    expect(parseServeArgs(['--model', 'copy-last'], {})).toEqual({
      model: 'copy-last',
      host: '127.0.0.1',
      port: 8000,
      allowedOrigins: [],
      maxQueue: 64,
      memoryGiB: 8,
    });
    expect(parseServeArgs(['--model', 'copy-last'], { LWM_SERVE_API_KEY: 'k' })).toMatchObject({ apiKey: 'k' });
    expect(parseServeArgs(['--model', 'm', '--allowed-origins', 'http://localhost:5173, *', '--port', '0'], {})).toMatchObject({
      allowedOrigins: ['http://localhost:5173', '*'],
      port: 0,
    });
  });

  it('--envs: environments with or without a model, and their limits', () => {
    expect(parseServeArgs(['--envs'], {})).toMatchObject({ model: '', envs: { maxEpisodes: 64, idleMs: 600_000 } });
    expect(parseServeArgs(['--envs', '--model', 'm', '--max-episodes', '8', '--episode-idle', '30'], {})).toMatchObject({
      model: 'm',
      envs: { maxEpisodes: 8, idleMs: 30_000 },
    });
    expect(() => parseServeArgs(['--model', 'm', '--max-episodes', '8'], {})).toThrow('--max-episodes is for --envs');
    expect(() => parseServeArgs(['--envs', '--max-episodes', '0'], {})).toThrow('--max-episodes must be an integer from 1');
  });

  it('refuses bad flags with the flag named', () => {
    const bad: [string[], string][] = [
      [[], '--model is required (a checkpoint, a Hugging Face folder, an ONNX folder, or copy-last), or --envs'],
      [['--model', 'm', '--port', '70000'], '--port must be an integer from 0 to 65535'],
      [['--model', 'm', '--allowed-origins', 'localhost'], '"localhost" is not an origin'],
      [['--model', 'm', '--weights', 'f8'], '--weights must be f32 or f16'],
      [['--model', 'm', '--memory-gib', '0'], '--memory-gib must be'],
      [['--model', 'm', '--model-id', 'a b'], '--model-id must be'],
      [['--model', 'm', 'extra'], "Unexpected argument 'extra'"],
      [['--model', 'm', '--nope'], "Unknown option '--nope'"],
    ];
    for (const [argv, message] of bad) {
      expect(() => parseServeArgs(argv, {}), argv.join(' ')).toThrow(UsageError);
      expect(() => parseServeArgs(argv, {}), argv.join(' ')).toThrow(message);
    }
  });

  it('--model: a file is a checkpoint, a folder with safetensors a Hugging Face folder, an ONNX-only folder ONNX', () => {
    const ckpt = join(tmp, 'run.safetensors');
    writeFileSync(ckpt, '');
    const args = (model: string, more: string[] = []) => parseServeArgs(['--model', model, ...more], {}) as Exclude<ReturnType<typeof parseServeArgs>, 'help'>;
    expect(serveRef(args(ckpt, ['--weights', 'f16']))).toEqual({ kind: 'checkpoint', checkpoint: { key: ckpt, label: 'run.safetensors', weights: 'f16' } });
    expect(serveRef(args(HF_FOLDER, ['--context', '64']))).toEqual({ kind: 'hf', hf: { folderId: HF_FOLDER, name: 'llama', context: 64, memoryGiB: 8 } });
    mkdirSync(join(tmp, 'exported', 'onnx'), { recursive: true });
    expect(serveRef(args(join(tmp, 'exported'), ['--variant', 'q4']))).toEqual({
      kind: 'onnx',
      onnx: { folderId: join(tmp, 'exported'), name: 'exported', file: 'q4', execution: 'wasm' },
    });
    expect(serveRef(args('copy-last'))).toEqual({ kind: 'copy-last' });
    expect(() => serveRef(args(join(tmp, 'missing')))).toThrow(FileError);
    mkdirSync(join(tmp, 'empty'));
    expect(() => serveRef(args(join(tmp, 'empty')))).toThrow('is not a model folder');
  });
});

/** Starts `lwm serve` in its own process; resolves with its URL once it listens. */
function startServe(args: string[]) {
  const child = spawn(process.execPath, [LWM, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/\S+)\/v1/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error(`lwm serve exited: ${err}`)));
  });
  return { child, url, exited, output: () => ({ out, err }) };
}

const SYSTEM = systemPromptToText({
  task_description: 'Use the shell.',
  action_space: 'bash commands',
  initial_state: 'user@box:~$',
  demonstrations: '',
  simulation_instruction: 'Be exact.',
});
const AWB = [
  { task: 'terminal', id: 't1', prompt: ['### Turn 1\n**Action:**\nls'], response: ['**Environment Observation:**\na.txt'], system_str: SYSTEM, turn_idx: 1 },
  {
    task: 'terminal',
    id: 't2',
    prompt: ['### Turn 1\n**Action:**\nls', '### Turn 2\n**Action:**\nls -a'],
    response: ['**Environment Observation:**\na.txt', '**Environment Observation:**\n. .. a.txt'],
    system_str: SYSTEM,
    turn_idx: 2,
  },
];

describe('lwm serve: the command', () => {
  it('serves the copy-last baseline to lwm infer --backend endpoint (the same predictions as the baseline itself), then stops on SIGTERM', async () => {
    const server = startServe(['--model', 'copy-last', '--port', '0']);
    try {
      const url = await server.url;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', model: 'copy-last' });
      const file = join(tmp, 'awb.jsonl');
      await writeFile(file, AWB.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const viaServer = captureIO();
      expect(await infer([file, '--backend', 'endpoint', '--base-url', `${url}/v1`, '--model', 'copy-last'], viaServer)).toBe(0);
      const direct = captureIO();
      expect(await infer([file, '--backend', 'copy-last'], direct)).toBe(0);
      const gens = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { gen: string }).gen);
      expect(gens(viaServer.stdout)).toEqual(gens(direct.stdout));
      expect(gens(direct.stdout)).toEqual([
        '<predicted_observation>\nuser@box:~$\n</predicted_observation>',
        '<predicted_observation>\na.txt\n</predicted_observation>',
      ]);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    expect(server.output().err).toContain('SIGTERM: closing');
  }, 60_000);
});
