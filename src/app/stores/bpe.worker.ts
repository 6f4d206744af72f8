// Trains the viewer's byte-level BPE off the main thread (half a second to seconds on a large
// dataset), so the page keeps scrolling while it runs.
import { trainBpe } from '../../core/tokenizer/index.ts';

export interface BpeRequest {
  corpus: string[];
  vocabSize: number;
}

self.onmessage = (e: MessageEvent<BpeRequest>) => {
  try {
    const tok = trainBpe(e.data.corpus, { vocabSize: e.data.vocabSize });
    self.postMessage({ ok: true, json: tok.toJSON() });
  } catch (err) {
    self.postMessage({ ok: false, error: (err as Error).message });
  }
};
