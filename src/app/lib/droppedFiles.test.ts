// A drop's files with their paths: a dropped folder is walked (in batches, as readEntries answers),
// hidden folders are skipped, loose files keep their names.
import { describe, expect, it } from 'vitest';
import { droppedFiles } from './droppedFiles.ts';

type Entry = {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  fullPath: string;
  file?: (ok: (f: File) => void) => void;
  createReader?: () => { readEntries(ok: (e: Entry[]) => void): void };
};

function fileEntry(fullPath: string): Entry {
  const name = fullPath.split('/').pop()!;
  return { isFile: true, isDirectory: false, name, fullPath, file: (ok) => ok(new File([fullPath], name)) };
}

function dirEntry(fullPath: string, children: Entry[]): Entry {
  // Two entries per batch, then an empty batch: readEntries must be called until it answers none.
  return {
    isFile: false,
    isDirectory: true,
    name: fullPath.split('/').pop()!,
    fullPath,
    createReader: () => {
      let at = 0;
      return { readEntries: (ok) => ok(children.slice(at, (at += 2))) };
    },
  };
}

function transfer(entries: (Entry | null)[], files: File[] = []): DataTransfer {
  return { items: entries.map((e) => ({ kind: 'file', webkitGetAsEntry: () => e })), files } as unknown as DataTransfer;
}

describe('dropped files', () => {
  it("walks a dropped folder and keeps each file's path under it", async () => {
    const folder = dirEntry('/SmolLM2', [
      fileEntry('/SmolLM2/config.json'),
      fileEntry('/SmolLM2/model.safetensors'),
      fileEntry('/SmolLM2/tokenizer.json'),
      dirEntry('/SmolLM2/.cache', [fileEntry('/SmolLM2/.cache/x')]),
      dirEntry('/SmolLM2/onnx', [fileEntry('/SmolLM2/onnx/model.onnx')]),
    ]);
    const got = await droppedFiles(transfer([folder]));
    expect(got.map((f) => f.path)).toEqual(['SmolLM2/config.json', 'SmolLM2/model.safetensors', 'SmolLM2/tokenizer.json', 'SmolLM2/onnx/model.onnx']);
    expect(await got[0].file.text()).toBe('/SmolLM2/config.json');
  });

  it('gives loose files their names when the browser offers no entries', async () => {
    const f = new File(['{}'], 'config.json');
    expect(await droppedFiles(transfer([null], [f]))).toEqual([{ path: 'config.json', file: f }]);
  });
});
