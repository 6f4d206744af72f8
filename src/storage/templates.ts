// Template versions (v0…vN) and cached tokenizers in IndexedDB. Writes go through write() (runs.ts),
// so a full quota is a StorageFullError with the message the runs and datasets give.
import { BUILTIN_TEMPLATES, normalizeTemplate } from '../core/templates/index.ts';
import type { TokenizerJSON } from '../core/tokenizer/index.ts';
import { openStudioDB } from './db.ts';
import type { TemplateVersion } from '../core/records.ts';
import { write } from './runs.ts';

/** Builtin lineage: v0 is the root, each later builtin derives from the one before. */
function builtinVersions(): TemplateVersion[] {
  const versions = Object.keys(BUILTIN_TEMPLATES).sort(compareVersions);
  return versions.map((v, i) => ({
    version: v,
    parent: i === 0 ? null : versions[i - 1],
    note: `built-in: ${BUILTIN_TEMPLATES[v].description}`,
    createdAt: 0,
    builtin: true,
    template: structuredClone(BUILTIN_TEMPLATES[v]),
  }));
}

/** 'v2' < 'v10': numeric order on the number after the v, then by name. */
export function compareVersions(a: string, b: string): number {
  const na = /^v(\d+)$/.exec(a);
  const nb = /^v(\d+)$/.exec(b);
  if (na && nb) return Number(na[1]) - Number(nb[1]);
  if (na) return -1;
  if (nb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * All versions; the builtins are (re)written from the code so the lineage always starts at v0.
 * Versions stored as JSON templates (before templates became text) are read as the text
 * template that renders the same; the stored record is left as it was.
 */
export async function listTemplateVersions(): Promise<TemplateVersion[]> {
  const db = await openStudioDB();
  const tx = db.transaction('templates', 'readwrite');
  for (const b of builtinVersions()) {
    const stored = await tx.store.get(b.version);
    if (!stored || (stored.builtin && JSON.stringify(stored) !== JSON.stringify(b))) await tx.store.put(b);
  }
  const all = await tx.store.getAll();
  await tx.done;
  return all.map((v) => ({ ...v, template: normalizeTemplate(v.template) })).sort((a, b) => compareVersions(a.version, b.version));
}

/** The next free name in the lineage: one past the highest vN. */
export function nextVersionName(existing: string[]): string {
  let max = -1;
  for (const v of existing) {
    const m = /^v(\d+)$/.exec(v);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return `v${max + 1}`;
}

export async function addTemplateVersion(entry: TemplateVersion): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['templates'], async (tx) => {
    const store = tx.objectStore('templates');
    if (await store.getKey(entry.version)) throw new Error(`a template version named ${entry.version} already exists`);
    await store.add(entry);
  });
}

export async function getCachedTokenizer(datasetId: string): Promise<TokenizerJSON | undefined> {
  const db = await openStudioDB();
  return (await db.get('tokenizers', datasetId))?.json;
}

export async function putCachedTokenizer(datasetId: string, vocabSize: number, json: TokenizerJSON): Promise<void> {
  const db = await openStudioDB();
  await write(db, ['tokenizers'], async (tx) => {
    await tx.objectStore('tokenizers').put({ datasetId, vocabSize, createdAt: Date.now(), json });
  });
}
