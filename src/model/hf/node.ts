// A model folder on disk, for the CLI (Node-only: the app never imports this file; it gives
// filesFolder's File objects instead). Files are read by byte range, so a large safetensors
// shard is never read whole to plan a load.
import { open, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { HfFolderError, type ModelFiles } from './files.ts';

/** Subfolders deeper than this are not listed (an HF folder keeps its files at the top, ONNX ones under `onnx/`). */
const MAX_DEPTH = 3;

async function walk(root: string, dir: string, depth: number, out: string[]): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (depth < MAX_DEPTH && !e.name.startsWith('.')) await walk(root, p, depth + 1, out);
    } else if (e.isFile() || e.isSymbolicLink()) out.push(relative(root, p).split(sep).join('/'));
  }
}

/** The folder at `dir` (files listed once, when it is opened). */
export async function nodeFolder(dir: string): Promise<ModelFiles> {
  let info;
  try {
    info = await stat(dir);
  } catch (e) {
    throw new HfFolderError(`${dir}: cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (!info.isDirectory())
    throw new HfFolderError(`${dir}: is not a folder (a Hugging Face model is a folder with config.json, *.safetensors and tokenizer.json)`);
  const paths: string[] = [];
  await walk(dir, dir, 1, paths);
  paths.sort();
  const known = new Set(paths);
  const full = (path: string): string => {
    if (!known.has(path)) throw new HfFolderError(`${dir}: has no file '${path}'`);
    return join(dir, ...path.split('/'));
  };
  return {
    label: dir,
    list: () => [...paths],
    size: async (path) => (await stat(full(path))).size,
    read: async (path, start = 0, end) => {
      const fh = await open(full(path), 'r');
      try {
        const stop = end ?? (await fh.stat()).size;
        const buf = new Uint8Array(Math.max(0, stop - start));
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return got === buf.length ? buf : buf.subarray(0, got);
      } finally {
        await fh.close();
      }
    },
  };
}
