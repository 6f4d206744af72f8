// A run's Hugging Face folder picked again after a reload: the same folder is recognised from its
// files' sizes, config.json and safetensors headers; another one is refused with what differs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { folderFingerprint, folderMismatch, folderNeeded, type HfFolderFile } from './hfFolder.ts';

const DIR = new URL('../model/fixtures/hf/llama-chat/', import.meta.url);
const NAMES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];

function folder(name: string, change: (file: string, bytes: Uint8Array) => Uint8Array = (_, b) => b, extra: HfFolderFile[] = []): HfFolderFile[] {
  return [...NAMES.map((n) => ({ path: `${name}/${n}`, file: new Blob([change(n, new Uint8Array(readFileSync(new URL(n, DIR)))) as BlobPart]) })), ...extra];
}

describe('folderFingerprint / folderMismatch', () => {
  it('the same files under another folder name, with a README beside them, are the same folder', async () => {
    const a = await folderFingerprint(folder('TinyChat'));
    const b = await folderFingerprint(folder('Copy', undefined, [{ path: 'Copy/README.md', file: new Blob(['hello']) }]));
    expect(a.name).toBe('TinyChat');
    expect(a.files.map((f) => f.path)).toEqual(NAMES);
    expect(a.config).toMatch(/^[0-9a-f]{64}$/);
    expect(folderMismatch(a, b)).toBeNull();
  });

  it('names the file that is missing, of another size, or a config.json that differs', async () => {
    const run = await folderFingerprint(folder('TinyChat'));
    const missing = await folderFingerprint(folder('Other').filter((f) => !f.path.endsWith('tokenizer.json')));
    expect(folderMismatch(run, missing)).toBe('Other is not the folder this run trained on (TinyChat): tokenizer.json is missing.');
    const bigger = await folderFingerprint(folder('Other', (n, b) => (n === 'model.safetensors' ? new Uint8Array([...b, 0]) : b)));
    expect(folderMismatch(run, bigger)).toMatch(/: model\.safetensors is \d+ bytes, was \d+\.$/);
    // The same size, one value changed: rope_theta 10000 → 20000.
    const config = await folderFingerprint(
      folder('Other', (n, b) =>
        n === 'config.json' ? new TextEncoder().encode(new TextDecoder().decode(b).replace(/"rope_theta": 10000(\.0)?/, (m) => m.replace('1', '2'))) : b,
      ),
    );
    expect(config.files).toEqual(run.files);
    expect(folderMismatch(run, config)).toBe('Other is not the folder this run trained on (TinyChat): config.json differs.');
  });
});

describe('folderNeeded', () => {
  it('a LoRA run always needs its folder; a full fine-tune only before its first checkpoint', () => {
    const hf = (tuning: 'full' | 'lora') => ({ tuning });
    expect(folderNeeded({ checkpoints: {} })).toBe(false);
    expect(folderNeeded({ hf: hf('lora'), checkpoints: { last: {} } })).toBe(true);
    expect(folderNeeded({ hf: hf('full'), checkpoints: {} })).toBe(true);
    expect(folderNeeded({ hf: hf('full'), checkpoints: { last: {} } })).toBe(false);
    expect(folderNeeded({ hf: hf('full'), checkpoints: {}, from: { key: 'k' } })).toBe(false);
  });
});
