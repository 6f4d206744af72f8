// The same job code runs in a Web Worker (Chromium) and in-process (Node/Dawn).
import { describe, expect, it } from 'vitest';
import { GpuRuntime } from '../gpu/runtime.ts';
import { JobClient } from './client.ts';
import { JobHost } from './host.ts';
import { JOB_RUNNERS } from './jobs.ts';
import type { FromWorker } from './protocol.ts';

const inBrowser = typeof window !== 'undefined';

describe(`jobs ${inBrowser ? 'in a Web Worker' : 'in-process (Node)'}`, () => {
  it('runs the self-test job on the GPU and reports its result', async () => {
    const events: FromWorker[] = [];
    let result: unknown;
    if (inBrowser) {
      const client = JobClient.spawn();
      client.on((m) => events.push(m));
      const id = client.start({ kind: 'selftest' });
      result = await client.wait(id);
      client.terminate();
      expect(events.find((e) => e.type === 'ready')).toBeTruthy();
    } else {
      let rt: GpuRuntime | null = null;
      const host = new JobHost(
        async () => (rt ??= await GpuRuntime.create()),
        JOB_RUNNERS,
        (m) => events.push(m),
      );
      host.handle({ type: 'start', jobId: 'st', spec: { kind: 'selftest' } });
      while (!events.some((e) => e.type === 'done' || e.type === 'error')) await new Promise((r) => setTimeout(r, 20));
      result = (events.find((e) => e.type === 'done') as { result: unknown } | undefined)?.result;
      (rt as GpuRuntime | null)?.dispose();
    }
    expect(events.filter((e) => e.type === 'error')).toEqual([]);
    expect(result).toMatchObject({ passed: 4, total: 4 });
    expect(events.filter((e) => e.type === 'log').length).toBe(4);
    // Each check's result also reaches the page as it finishes (the System view's table).
    expect(events.filter((e) => e.type === 'progress').map((e) => (e as { data: { name: string } }).data.name)).toEqual(
      (result as { results: { name: string }[] }).results.map((r) => r.name),
    );
  });
});
