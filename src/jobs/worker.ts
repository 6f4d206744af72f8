// The Web Worker that owns the GPU device for jobs (training, generation, evaluation, the kernel
// self-test). The page talks to it only through the messages in protocol.ts (see client.ts).
/// <reference lib="webworker" />
import { GpuRuntime } from '../gpu/runtime.ts';
import { WorkerDevice } from './device.ts';
import { JobHost } from './host.ts';
import { JOB_RUNNERS } from './jobs.ts';
import { useBundledOrtWasm } from './ortAssets.ts';
import { isToWorker, type FromWorker } from './protocol.ts';

const scope = self as unknown as DedicatedWorkerGlobalScope;
// biome-ignore lint/correctness/useHookAtTopLevel: not a React hook; it points onnxruntime-web at the bundled .wasm
useBundledOrtWasm();
const post = (m: FromWorker) => scope.postMessage(m);

const device = new WorkerDevice(() => GpuRuntime.create(), post);
const host = new JobHost(() => device.runtime(), JOB_RUNNERS, post);

scope.onmessage = (ev: MessageEvent) => {
  if (!isToWorker(ev.data)) {
    post({ type: 'error', message: `The worker received a message it does not understand: ${JSON.stringify(ev.data).slice(0, 200)}` });
    return;
  }
  if (ev.data.type === 'device') device.handle(ev.data.request);
  else host.handle(ev.data);
};

void device.report();
