// A scripted jobs worker for tests of the Playground's generate jobs, behind a real JobClient:
// `script` answers each started job (post sends a worker message to the page, a microtask later);
// `onStop` answers a stop request (absent: the stop is only recorded).
import { JobClient, type WorkerLike } from './client.ts';
import type { GenerateJobSpec } from './playground.ts';
import type { FromWorker, ToWorker } from './protocol.ts';

export type GenerateScript = (spec: GenerateJobSpec, jobId: string, post: (m: FromWorker) => void) => void;

export function scriptedWorker(script: GenerateScript, onStop?: (jobId: string, post: (m: FromWorker) => void) => void) {
  const started: GenerateJobSpec[] = [];
  const stopped: string[] = [];
  const worker: WorkerLike = {
    onmessage: null,
    postMessage(m: ToWorker) {
      const post = (x: FromWorker) => queueMicrotask(() => worker.onmessage?.({ data: x } as MessageEvent));
      if (m.type === 'start') {
        // The page's client sent a generate spec (the tests start nothing else).
        const spec = m.spec as unknown as GenerateJobSpec;
        started.push(spec);
        script(spec, m.jobId, post);
      } else if (m.type === 'stop') {
        stopped.push(m.jobId);
        onStop?.(m.jobId, post);
      }
    },
  };
  return { client: new JobClient(() => worker), started, stopped };
}
