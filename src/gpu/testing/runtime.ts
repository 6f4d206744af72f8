// The GPU runtime every *.gpu.test.ts shares within a file. A missing adapter is a failure,
// never a skip: a GPU suite that silently passes without a GPU proves nothing.
// Its device is kept (DeviceKeeper) for the next file run in the same process or page (gpu-node
// runs its files in one process, gpu-browser in one page: vitest.config.ts), so a file does not
// compile again the pipelines an earlier one compiled; each file's runtime still tracks and frees
// its own buffers.
import { afterAll } from 'vitest';
import { DeviceKeeper, type GpuRuntime } from '../runtime.ts';

let runtime: Promise<GpuRuntime> | null = null;
const keeper = new DeviceKeeper({}, 120_000);

function suiteName(): string {
  return typeof window === 'undefined' ? 'gpu-node (Dawn)' : 'gpu-browser (Chromium)';
}

export function gpuRuntime(): Promise<GpuRuntime> {
  if (!runtime) {
    runtime = keeper.open().then(
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
