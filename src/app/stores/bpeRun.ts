// One BPE training request to a worker (bpe.worker.ts): settles on the worker's answer, and also
// when the worker fails to load, crashes or sends an unreadable message, so the viewer never waits
// forever for token colours. The worker is terminated either way.
import type { BpeRequest } from './bpe.worker.ts';

/** What trainInWorker needs of a Worker (a fake one in tests). */
export interface BpeWorkerLike {
  postMessage(m: BpeRequest): void;
  onmessage: ((ev: MessageEvent) => void) | null;
  onerror: ((ev: ErrorEvent) => void) | null;
  onmessageerror: ((ev: MessageEvent) => void) | null;
  terminate(): void;
}

/** Resolves with the trained tokenizer's JSON; rejects with a message for the user. */
export function trainInWorker(w: BpeWorkerLike, request: BpeRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const finish = (ok: boolean, value: unknown) => {
      w.onmessage = w.onerror = w.onmessageerror = null;
      w.terminate();
      if (ok) resolve(value);
      else reject(new Error(value as string));
    };
    w.onmessage = (e: MessageEvent<{ ok: boolean; json?: unknown; error?: string }>) => {
      if (e.data?.ok) finish(true, e.data.json);
      else finish(false, `tokenizer training failed: ${e.data?.error ?? 'no reason given'}`);
    };
    w.onerror = (ev: ErrorEvent) => {
      ev.preventDefault?.();
      const text = ev.message;
      finish(
        false,
        `tokenizer training failed: the tokenizer worker ${text ? `raised "${text}"` : 'could not be loaded or crashed'}; tokens are shown as bytes`,
      );
    };
    w.onmessageerror = () => finish(false, 'tokenizer training failed: the tokenizer worker sent a message the page could not read; tokens are shown as bytes');
    w.postMessage(request);
  });
}
