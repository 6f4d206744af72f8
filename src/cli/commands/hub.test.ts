// The commands take a Hugging Face Hub id wherever they take a model folder: `lwm tokenize` and
// `lwm export` on `org/tiny` from a mock Hub on 127.0.0.1 (HF_ENDPOINT) give what they give for the
// fixture folder itself, with the download's progress on stderr the first time only; an unknown
// id, a gated one and an id missing offline are one-line errors naming the id (exit 1).
import { existsSync, readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderFiles, mockHubEnv } from '../../hub/testing.ts';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

const TINY = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const env = mockHubEnv(
  [
    { repo: 'org/tiny', refs: { main: 0 }, commits: [folderFiles(TINY, { skip: ['generate.json'] })] },
    { repo: 'org/gated', refs: { main: 0 }, commits: [folderFiles(TINY, { skip: ['generate.json'] })], gatedToken: 'hf_secret' },
  ],
  'lwm-hub-cli-',
);
beforeAll(env.start);
afterAll(env.stop);

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(argv, io);
  return { code, out: io.stdout, err: io.stderr };
}

describe('Hub ids on the command line', () => {
  it('lwm tokenize and lwm export: the same as for the folder; the second run downloads nothing', async () => {
    const local = await run('tokenize', '--model', TINY, '--chat', 'ls -la', '--json');
    expect(local.code, local.err).toBe(0);
    const first = await run('tokenize', '--model', 'org/tiny', '--chat', 'ls -la', '--json');
    expect(first.code, first.err).toBe(0);
    expect(first.out).toBe(local.out);
    expect(first.err).toContain('downloading org/tiny: model.safetensors (0.2 MB)\n');
    expect(first.err).toContain('  org/tiny: tokenizer.json: done\n');
    const second = await run('tokenize', '--model', 'org/tiny', '--chat', 'ls -la', '--json');
    expect(second).toEqual({ code: 0, out: local.out, err: '' });
    const out = join(env.root, 'onnx');
    const exported = await run('export', 'org/tiny', '--to', 'onnx', '-o', out);
    expect(exported.code, exported.err).toBe(0);
    expect(existsSync(join(out, 'onnx', 'model.onnx'))).toBe(true);
    expect(readdirSync(join(env.root, 'hub')).sort()).toEqual(['.locks', 'CACHEDIR.TAG', 'models--org--tiny']);
  });

  it('an unknown id, a gated one, one missing offline: one line naming the id, exit 1', async () => {
    const none = await run('generate', '--model', 'org/none', '--prompt', 'hi');
    expect(none).toEqual({
      code: 1,
      out: '',
      err: `lwm generate: org/none: no such model on ${env.hub.endpoint} (if it is private or gated, set HF_TOKEN to an access token)\n`,
    });
    const gated = await run('train', '--stage', 'sft', '--preset', 'micro', '--from', 'org/gated', '--steps', '1');
    expect(gated.code).toBe(1);
    expect(gated.err).toBe(
      `lwm train: org/gated: is a gated model on ${env.hub.endpoint}; accept its terms on its page, then set HF_TOKEN to an access token (or log in with \`hf auth login\`)\n`,
    );
    process.env.HF_HUB_OFFLINE = '1';
    try {
      const offline = await run('serve', '--model', 'org/gated', '--port', '0');
      expect(offline.code).toBe(1);
      expect(offline.err).toBe(
        `lwm serve: org/gated: is not in the Hugging Face cache (${join(env.root, 'hub')}) and HF_HUB_OFFLINE is set; download it once without HF_HUB_OFFLINE (or point HF_HUB_CACHE at a cache that has it)\n`,
      );
    } finally {
      delete process.env.HF_HUB_OFFLINE;
    }
  });

  it('a mistyped path: a model file is never looked up on the Hub; an id whose first part is a folder here says so', async () => {
    env.hub.requests.length = 0;
    const file = await run('serve', '--model', 'runs/w.safetensors', '--port', '0');
    expect(file).toEqual({
      code: 1,
      out: '',
      err: 'lwm serve: runs/w.safetensors: no such file or folder (a checkpoint, a Hugging Face folder, or an ONNX folder)\n',
    });
    expect(env.hub.requests).toEqual([]);
    await mkdir(join(env.root, 'runs'), { recursive: true });
    const cwd = process.cwd();
    process.chdir(env.root);
    try {
      const folder = await run('generate', '--model', 'runs/world', '--prompt', 'hi');
      expect(folder).toEqual({
        code: 1,
        out: '',
        err: `lwm generate: runs/world: no such model on ${env.hub.endpoint} (if it is private or gated, set HF_TOKEN to an access token) (runs/ is a folder here without world in it; a path is written ./runs/world)\n`,
      });
    } finally {
      process.chdir(cwd);
    }
  });
});
