import { describe, expect, it } from 'vitest';
import type { BpeRequest } from './bpe.worker.ts';
import { trainInWorker, type BpeWorkerLike } from './bpeRun.ts';

class FakeBpeWorker implements BpeWorkerLike {
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  onmessageerror: ((ev: MessageEvent) => void) | null = null;
  posted: BpeRequest[] = [];
  terminated = false;
  postMessage(m: BpeRequest) {
    this.posted.push(m);
  }
  terminate() {
    this.terminated = true;
  }
}

async function settled(p: Promise<unknown>): Promise<{ ok: unknown } | { err: string } | 'pending'> {
  const pending = new Promise<'pending'>((r) => setTimeout(() => r('pending'), 0));
  return Promise.race([
    p.then(
      (ok) => ({ ok }),
      (e: Error) => ({ err: e.message }),
    ),
    pending,
  ]);
}

const REQ: BpeRequest = { corpus: ['ab ab'], vocabSize: 300 };

describe('trainInWorker', () => {
  it('resolves with the trained JSON and terminates the worker', async () => {
    const w = new FakeBpeWorker();
    const p = trainInWorker(w, REQ);
    expect(w.posted).toEqual([REQ]);
    w.onmessage?.({ data: { ok: true, json: { merges: [] } } } as MessageEvent);
    expect(await settled(p)).toEqual({ ok: { merges: [] } });
    expect(w.terminated).toBe(true);
  });

  it('rejects with the worker’s own error', async () => {
    const w = new FakeBpeWorker();
    const p = trainInWorker(w, REQ);
    w.onmessage?.({ data: { ok: false, error: 'empty corpus' } } as MessageEvent);
    expect(await settled(p)).toEqual({ err: 'tokenizer training failed: empty corpus' });
  });

  it('rejects when the worker fails to load, instead of waiting forever', async () => {
    const w = new FakeBpeWorker();
    const p = trainInWorker(w, REQ);
    w.onerror?.(new Event('error') as ErrorEvent);
    expect(await settled(p)).toEqual({ err: expect.stringContaining('could not be loaded or crashed') });
    expect(w.terminated).toBe(true);
  });

  it('rejects when the worker crashes mid-training or sends an unreadable message', async () => {
    const a = new FakeBpeWorker();
    const pa = trainInWorker(a, REQ);
    a.onerror?.(Object.assign(new Event('error'), { message: 'Uncaught RangeError: Invalid array length' }) as ErrorEvent);
    expect(await settled(pa)).toEqual({ err: expect.stringContaining('raised "Uncaught RangeError: Invalid array length"') });
    const b = new FakeBpeWorker();
    const pb = trainInWorker(b, REQ);
    b.onmessageerror?.(new MessageEvent('messageerror'));
    expect(await settled(pb)).toEqual({ err: expect.stringContaining('could not read') });
  });
});
