import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderFiles, mockHubEnv } from '../hub/testing.ts';
import { BackendError } from './errors.ts';
import { refFromModel } from './node.ts';

const TINY = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
const env = mockHubEnv([{ repo: 'org/tiny', refs: { main: 0 }, commits: [folderFiles(TINY, { skip: ['generate.json'] })] }], 'lwm-hub-ref-');
beforeAll(env.start);
afterAll(env.stop);

describe('refFromModel', () => {
  it('a Hub id: the snapshot folder as a Hugging Face folder named by its id; a path as it is', async () => {
    const lines: string[] = [];
    const ref = await refFromModel('org/tiny', { memoryGiB: 2 }, (l) => lines.push(l));
    expect(ref).toEqual({
      kind: 'hf',
      hf: { folderId: join(env.root, 'hub', 'models--org--tiny', 'snapshots', env.hub.commit('org/tiny', 0)), name: 'org/tiny', context: null, memoryGiB: 2 },
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
