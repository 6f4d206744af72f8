// The files of a drop, with their paths: a dropped folder is walked (the File and Directory
// Entries API Chromium, Firefox and Safari share), dropped files keep their names. The entries are
// taken while the drop event lasts (a DataTransfer is emptied after it); they are read after.

/** Folders deeper than this under the dropped one are not walked (a model folder keeps its files near the top). */
const MAX_DEPTH = 3;

interface FileEntryLike {
  isFile: boolean;
  isDirectory: boolean;
  name: string;
  fullPath: string;
  file?(ok: (f: File) => void, fail: (e: unknown) => void): void;
  createReader?(): { readEntries(ok: (entries: FileEntryLike[]) => void, fail: (e: unknown) => void): void };
}

async function readAll(dir: FileEntryLike): Promise<FileEntryLike[]> {
  const reader = dir.createReader!();
  const out: FileEntryLike[] = [];
  // readEntries answers in batches (100 in Chromium) until it answers none.
  for (;;) {
    const batch = await new Promise<FileEntryLike[]>((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) return out;
    out.push(...batch);
  }
}

async function walk(entry: FileEntryLike, depth: number, out: { path: string; file: File }[]): Promise<void> {
  if (entry.isFile && entry.file) {
    const file = await new Promise<File>((ok, fail) => entry.file!(ok, fail));
    out.push({ path: entry.fullPath.replace(/^\/+/, ''), file });
  } else if (entry.isDirectory && depth <= MAX_DEPTH && !entry.name.startsWith('.')) {
    for (const e of await readAll(entry)) await walk(e, depth + 1, out);
  }
}

/** Call in the drop handler (synchronously); the promise gives every file with its path. */
export function droppedFiles(dt: DataTransfer): Promise<{ path: string; file: File }[]> {
  const items = Array.from(dt.items ?? []);
  const entries = items.map((i) =>
    i.kind === 'file' ? ((i as DataTransferItem & { webkitGetAsEntry?: () => FileEntryLike | null }).webkitGetAsEntry?.() ?? null) : null,
  );
  const files = Array.from(dt.files);
  if (!entries.length || entries.some((e) => e === null)) return Promise.resolve(files.map((f) => ({ path: f.name, file: f })));
  return (async () => {
    const out: { path: string; file: File }[] = [];
    for (const e of entries) await walk(e!, 1, out);
    return out;
  })();
}
