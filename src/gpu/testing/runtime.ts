// The GPU runtime every *.gpu.test.ts shares within a file. A missing adapter is a failure,
// never a skip: a GPU suite that silently passes without a GPU proves nothing.
import { afterAll } from 'vitest';
import { GpuRuntime } from '../runtime.ts';

let runtime: Promise<GpuRuntime> | null = null;

function suiteName(): string {
  return typeof window === 'undefined' ? 'gpu-node (Dawn)' : 'gpu-browser (Chromium)';
}

export function gpuRuntime(): Promise<GpuRuntime> {
  if (!runtime) {
    runtime = GpuRuntime.create().then(
      (rt) => {
        console.log(`[${suiteName()}] adapter: ${rt.describe()}`);
        return rt;
      },
      (e: Error) => {
        throw new Error(`[${suiteName()}] no WebGPU adapter, so this GPU test fails: ${e.message}`);
      },
    );
    afterAll(async () => {
      const rt = await runtime!.catch(() => null);
      rt?.dispose();
      runtime = null;
    });
  }
  return runtime;
}
