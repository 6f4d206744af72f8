// The Web Worker that owns the GPU device for jobs (training, generation, evaluation). The page
// talks to it only through the messages in protocol.ts (see client.ts).
/// <reference lib="webworker" />
import { GpuRuntime } from '../gpu/runtime.ts';
import { JobHost } from './host.ts';
import { JOB_RUNNERS } from './jobs.ts';
import { isToWorker, type FromWorker } from './protocol.ts';

const scope = self as unknown as DedicatedWorkerGlobalScope;
const post = (m: FromWorker) => scope.postMessage(m);

let runtime: Promise<GpuRuntime> | null = null;
function getRuntime(): Promise<GpuRuntime> {
  if (!runtime) {
    runtime = GpuRuntime.create().then((rt) => {
      rt.on((e) => {
        if (e.type === 'lost') {
          runtime = null; // the next job acquires a fresh device
          post({ type: 'error', message: e.error.message });
        }
      });
      return rt;
    });
    runtime.catch(() => (runtime = null));
  }
  return runtime;
}

const host = new JobHost(getRuntime, JOB_RUNNERS, post);

scope.onmessage = (ev: MessageEvent) => {
  if (!isToWorker(ev.data)) {
    post({ type: 'error', message: `The worker received a message it does not understand: ${JSON.stringify(ev.data).slice(0, 200)}` });
    return;
  }
  host.handle(ev.data);
};

getRuntime().then(
  (rt) => post({ type: 'ready', adapter: { description: rt.describe(), isFallbackAdapter: rt.report.isFallbackAdapter } }),
  (e: Error) => post({ type: 'unavailable', message: e.message }),
);
