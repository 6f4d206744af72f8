// A job host for tests: runs jobs in the test's own thread (no worker) and records every event,
// with waits for a job's end and its progress records. Shared by the job tests on the GPU.
import { GpuRuntime } from '../gpu/runtime.ts';
import { WorkerDevice } from './device.ts';
import { JobHost, type JobRunner } from './host.ts';
import type { TrainProgress } from './jobs.ts';
import type { FromWorker } from './protocol.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

export function testJobHost(rt: () => Promise<GpuRuntime>, runners: Record<string, JobRunner>, onEvent?: (m: FromWorker, host: JobHost) => void) {
  const events: FromWorker[] = [];
  const host: JobHost = new JobHost(rt, runners, (m) => {
    events.push(m);
    onEvent?.(m, host);
  });
  /** The job's last word: its final status (stopped, failed, done) or an error. */
  const finished = async (jobId: string) => {
    for (;;) {
      const end = events.find(
        (e) =>
          'jobId' in e &&
          e.jobId === jobId &&
          ((e.type === 'status' && (e.state === 'stopped' || e.state === 'failed' || e.state === 'done')) || e.type === 'error'),
      );
      if (end) return end;
      await tick();
    }
  };
  const progress = (jobId: string) => events.flatMap((e) => (e.type === 'progress' && e.jobId === jobId ? [e.data as TrainProgress] : []));
  return { host, events, finished, progress };
}

/**
 * A job host on a WorkerDevice of its own, as the worker has, for device-loss tests: `held` lists
 * every runtime it acquired (a lost device is replaced by a fresh one on the next job), and
 * `onEvent` may destroy the device (`device.handle('destroy')`) at the moment a test chooses.
 */
export function deviceJobHost(runners: Record<string, JobRunner>, onEvent?: (m: FromWorker, device: WorkerDevice) => void) {
  const held: GpuRuntime[] = [];
  let events: FromWorker[] = [];
  const device = new WorkerDevice(
    async () => {
      const rt = await GpuRuntime.create();
      held.push(rt);
      return rt;
    },
    (m) => events.push(m),
  );
  const t = testJobHost(
    () => device.runtime(),
    runners,
    (m) => onEvent?.(m, device),
  );
  events = t.events;
  return { ...t, device, held };
}
