// A fake jobs worker for the store tests: the stores' jobClient() is replaced by one that records
// each started job and lets the test send the worker's messages. Its state lives on globalThis,
// so a test that reloads the modules (vi.resetModules) still sees the jobs the reloaded store starts.
//   vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
//   const { started, emit } = fakeJobs();
import type { FromWorker, JobSpecBase } from '../../../train/protocol.ts';

export interface FakeJobs {
  /** Every job started, in order, with the id the client gave it. */
  started: { jobId: string; spec: JobSpecBase }[];
  /** Sends a worker message to every listener of the page. */
  emit(m: FromWorker): void;
  client: {
    on(l: (m: FromWorker) => void): () => void;
    start(spec: JobSpecBase): string;
    device(): void;
    pause(): void;
    resume(): void;
    stop(): void;
  };
}

const KEY = Symbol.for('lwm.test.fakeJobs');

export function fakeJobs(): FakeJobs {
  const g = globalThis as { [KEY]?: FakeJobs };
  if (g[KEY]) return g[KEY];
  const listeners = new Set<(m: FromWorker) => void>();
  const started: FakeJobs['started'] = [];
  const jobs: FakeJobs = {
    started,
    emit: (m) => listeners.forEach((l) => l(m)),
    client: {
      on(l) {
        listeners.add(l);
        return () => listeners.delete(l);
      },
      start(spec) {
        const jobId = `job-${started.length + 1}`;
        started.push({ jobId, spec });
        return jobId;
      },
      device() {},
      pause() {},
      resume() {},
      stop() {},
    },
  };
  return (g[KEY] = jobs);
}

/** What `vi.mock('./jobClient.ts', …)` returns: the page's one client, faked. */
export function jobClientModule() {
  return { jobClient: () => fakeJobs().client };
}
