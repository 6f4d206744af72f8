// A fake jobs worker for the store tests: the stores' jobClient() is replaced by a real JobClient
// over a stand-in worker that records each started job and lets the test send the worker's
// messages. Its state lives on globalThis, so a test that reloads the modules (vi.resetModules)
// still sees the jobs the reloaded store starts.
//   vi.mock('./jobClient.ts', async () => (await import('./testing/fakeJobs.ts')).jobClientModule());
//   const { started, emit } = fakeJobs();
import { JobClient, type WorkerLike } from '../../../jobs/client.ts';
import type { FromWorker, JobSpecBase, ToWorker } from '../../../jobs/protocol.ts';

export interface FakeJobs {
  /** Every job started, in order, with the id the client gave it. */
  started: { jobId: string; spec: JobSpecBase }[];
  /** Every job the page asked to stop. */
  stopped: string[];
  /** Sends a worker message to the page (every listener, and the jobs it follows). */
  emit(m: FromWorker): void;
  client: JobClient;
}

const KEY = Symbol.for('lwm.test.fakeJobs');

export function fakeJobs(): FakeJobs {
  const g = globalThis as { [KEY]?: FakeJobs };
  if (g[KEY]) return g[KEY];
  const started: FakeJobs['started'] = [];
  const stopped: string[] = [];
  const worker: WorkerLike = {
    onmessage: null,
    postMessage(m: ToWorker) {
      if (m.type === 'start') started.push({ jobId: m.jobId, spec: m.spec });
      else if (m.type === 'stop') stopped.push(m.jobId);
    },
  };
  const client = new JobClient(() => worker);
  const jobs: FakeJobs = {
    started,
    stopped,
    emit: (m) => worker.onmessage?.({ data: m } as MessageEvent),
    client,
  };
  return (g[KEY] = jobs);
}

/** What `vi.mock('./jobClient.ts', …)` returns: the page's one client, faked. */
export function jobClientModule() {
  return { jobClient: () => fakeJobs().client };
}
