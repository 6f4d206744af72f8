// `lwm generate --model org/tiny` with HF_ENDPOINT at the mock Hub (src/hub/testing.ts): the tiny
// Llama folder is downloaded into huggingface_hub's cache layout and generates transformers'
// greedy ids (scripts/fixtures/hf_tiny_models.py recorded them in generate.json); the second run
// reads the cache alone (HF_HUB_OFFLINE) and generates the same.
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderFiles, mockHubEnv } from '../../hub/testing.ts';
import { captureIO } from '../testing.ts';
import generate from './generate.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const env = mockHubEnv([{ repo: 'org/tiny', refs: { main: 0 }, commits: [folderFiles(FOLDER, { skip: ['generate.json'] })] }], 'lwm-hub-generate-');
beforeAll(env.start);
afterAll(env.stop);

describe('lwm generate from the Hugging Face Hub', () => {
  it("downloads org/tiny into the cache and generates transformers' greedy ids, then again offline", async () => {
    const want = JSON.parse(readFileSync(join(FOLDER, 'generate.json'), 'utf8')).prompt;
    const argv = ['--model', 'org/tiny', '--prompt', want.input, '--max-tokens', '4', '--temperature', '0', '--json'];
    const io = captureIO();
    expect(await generate(argv, io), io.stderr).toBe(0);
    const out = JSON.parse(io.stdout);
    expect(out.prompt_ids).toEqual(want.prompt_ids);
    expect(out.ids).toEqual(want.ids.slice(0, 4));
    expect(io.stderr).toContain('downloading org/tiny: model.safetensors (0.2 MB)\n');
    const commit = env.hub.commit('org/tiny', 0);
    const repo = join(env.root, 'hub', 'models--org--tiny');
    expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe(commit);
    const weights = join(repo, 'snapshots', commit, 'model.safetensors');
    expect(lstatSync(weights).isSymbolicLink()).toBe(true);
    expect(readlinkSync(weights)).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/);
    process.env.HF_HUB_OFFLINE = '1';
    try {
      const again = captureIO();
      expect(await generate(argv, again), again.stderr).toBe(0);
      expect(again.stderr).toBe('');
      expect(JSON.parse(again.stdout).ids).toEqual(out.ids);
    } finally {
      delete process.env.HF_HUB_OFFLINE;
    }
  });
});
