// The library's door for Hub ids (src/backends/node.ts): refFromModel names a Hugging Face Hub
// model by its id and opens its snapshot folder in the Hugging Face cache; a path on disk is
// opened as it is; a Hub failure is a BackendError about the folder, naming the id.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderFiles, startMockHub, type MockHub } from '../hub/testing.ts';
import { BackendError } from './errors.ts';
import { refFromModel } from './node.ts';

const TINY = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
let hub: MockHub;
let root: string;
const saved = { ...process.env };

beforeAll(async () => {
  hub = await startMockHub([{ repo: 'org/tiny', refs: { main: 0 }, commits: [folderFiles(TINY, { skip: ['generate.json'] })] }]);
  root = await mkdtemp(join(tmpdir(), 'lwm-hub-ref-'));
  for (const k of ['HF_TOKEN', 'HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE', 'HF_TOKEN_PATH', 'HUGGINGFACE_HUB_CACHE']) delete process.env[k];
  Object.assign(process.env, { HF_ENDPOINT: hub.endpoint, HF_HOME: join(root, 'hf'), HF_HUB_CACHE: join(root, 'hub') });
});

afterAll(async () => {
  process.env = saved;
  await hub.close();
  await rm(root, { recursive: true, force: true });
});

describe('refFromModel', () => {
  it('a Hub id: the snapshot folder as a Hugging Face folder named by its id; a path as it is', async () => {
    const lines: string[] = [];
    const ref = await refFromModel('org/tiny', { memoryGiB: 2 }, (l) => lines.push(l));
    expect(ref).toEqual({
      kind: 'hf',
      hf: { folderId: join(root, 'hub', 'models--org--tiny', 'snapshots', hub.commit('org/tiny', 0)), name: 'org/tiny', context: null, memoryGiB: 2 },
    });
    expect(lines).toContain('  org/tiny: model.safetensors: done\n');
    expect(await refFromModel(TINY)).toEqual({ kind: 'hf', hf: { folderId: TINY, name: 'llama-chat', context: null, memoryGiB: 8 } });
    expect(await refFromModel('copy-last')).toEqual({ kind: 'copy-last' });
    const e = await refFromModel('org/none').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendError);
    expect((e as BackendError).about).toBe('folder');
    expect((e as BackendError).message).toMatch(/^org\/none: no such model on /);
  });
});
