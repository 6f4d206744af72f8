// The viewer's tokenizer: a small byte-level BPE trained once on the active dataset and cached
// in IndexedDB, so token colours show tokens a model trained on this data would see. Until it
// is ready (or when the dataset is too small to learn merges from) tokens are single bytes.
import { create } from 'zustand';
import type { Trajectory } from '../../core/schema/types.ts';
import { Tokenizer } from '../../core/tokenizer/index.ts';
import { getCachedTokenizer, putCachedTokenizer } from '../../storage/templates.ts';
import { STORAGE_FULL_MESSAGE, StorageFullError } from '../../storage/runs.ts';
import BpeWorker from './bpe.worker.ts?worker';
import { trainInWorker } from './bpeRun.ts';

/** Vocabulary of the viewer's BPE: large enough for whole words, small enough to train in seconds. */
export const VIEWER_VOCAB = 4096;
/** Below this many characters a BPE would learn noise; byte tokens are shown instead. */
export const MIN_BPE_CHARS = 20_000;

const BYTES = new Tokenizer([]);

interface TokenizerState {
  datasetId: string | null;
  tokenizer: Tokenizer;
  kind: 'bytes' | 'training' | 'bpe';
  error: string | null;
  ensure(datasetId: string, trajectories: Trajectory[]): void;
}

let worker: Worker | null = null;

export const useTokenizerStore = create<TokenizerState>()((set, get) => ({
  datasetId: null,
  tokenizer: BYTES,
  kind: 'bytes',
  error: null,
  ensure(datasetId, trajectories) {
    if (get().datasetId === datasetId) return;
    worker?.terminate();
    worker = null;
    set({ datasetId, tokenizer: BYTES, kind: 'bytes', error: null });
    let chars = 0;
    for (const t of trajectories) for (const turn of t.turns) chars += turn.action.length + turn.observation.length;
    if (chars < MIN_BPE_CHARS) return;
    set({ kind: 'training' });
    void (async () => {
      try {
        const cached = await getCachedTokenizer(datasetId);
        if (cached) {
          if (get().datasetId === datasetId) set({ tokenizer: Tokenizer.fromJSON(cached), kind: 'bpe' });
          return;
        }
      } catch {
        /* a broken cache entry is retrained below */
      }
      const w = (worker = new BpeWorker());
      const corpus = trajectories.flatMap((t) => t.turns.flatMap((turn) => [turn.action, turn.observation]));
      let json: unknown;
      try {
        json = await trainInWorker(w, { corpus, vocabSize: VIEWER_VOCAB });
      } catch (e) {
        if (get().datasetId === datasetId) set({ kind: 'bytes', error: (e as Error).message });
        return;
      } finally {
        if (worker === w) worker = null;
      }
      if (get().datasetId !== datasetId) return;
      const tok = Tokenizer.fromJSON(json);
      set({ tokenizer: tok, kind: 'bpe' });
      try {
        await putCachedTokenizer(datasetId, VIEWER_VOCAB, tok.toJSON());
      } catch (e) {
        // The tokenizer still works; only the next visit retrains it. Say why.
        const why = e instanceof StorageFullError ? STORAGE_FULL_MESSAGE : (e as Error).message;
        if (get().datasetId === datasetId) set({ error: `not cached for the next visit: ${why}` });
      }
    })();
  },
}));
