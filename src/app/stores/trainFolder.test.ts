// The Train view's Hugging Face folder: what a pick leaves in the store.
import { describe, expect, it } from 'vitest';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import { useTrainFolderStore } from './trainFolder.ts';

/** A config.json whose bytes arrive when `open()` is called (a slow disk, a large folder). */
function gated(text: string): { file: Blob; open(): void } {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  class Slow extends Blob {
    override async arrayBuffer(): Promise<ArrayBuffer> {
      await gate;
      return super.arrayBuffer();
    }
  }
  return { file: new Slow([text]), open };
}

describe('the Train view folder', () => {
  it('keeps the folder picked last when an earlier pick finishes reading after it', async () => {
    const slow = gated('{"model_type": "llama"}');
    const first: HfFolderFile[] = [{ path: 'First/config.json', file: slow.file }];
    const second: HfFolderFile[] = [{ path: 'Second/config.json', file: new Blob(['{"model_type": "qwen2"}']) }];
    const store = useTrainFolderStore.getState();
    const a = store.pick(first);
    await store.pick(second);
    expect(useTrainFolderStore.getState().folder?.name).toBe('Second');
    slow.open();
    await a;
    expect(useTrainFolderStore.getState().folder?.name).toBe('Second');
    expect(useTrainFolderStore.getState().folder?.files).toBe(second);
    expect(useTrainFolderStore.getState().status).toBe('idle');
  });
});

describe('forgetting the folder', () => {
  it('while a pick is still reading leaves no folder once it finishes', async () => {
    const slow = gated('{"model_type": "llama"}');
    const store = useTrainFolderStore.getState();
    const a = store.pick([{ path: 'Late/config.json', file: slow.file }]);
    store.forget();
    slow.open();
    await a;
    expect(useTrainFolderStore.getState()).toMatchObject({ folder: null, status: 'idle', error: null });
  });
});
