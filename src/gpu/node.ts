// WebGPU in Node through Dawn (npm `webgpu`). Node-only: the app never imports this file.
// On machines whose only Vulkan driver is SwiftShader, start Node with the environment from
// scripts/chromium.mjs gpuEnv() (VK_ICD_FILENAMES etc.); `npm test` and `lwm` do.
import { DeviceKeeper, type AcquireOptions, type GpuRuntime } from './runtime.ts';

/** What to install when Dawn finds no adapter: one paragraph, for the command line. */
export const NODE_WEBGPU_HELP = [
  'lwm runs models on the GPU through Dawn, which needs Vulkan on Linux (Metal on macOS, Direct3D 12 on Windows).',
  'Install the Vulkan loader, libvulkan1 (Debian/Ubuntu: sudo apt-get install libvulkan1), and a GPU driver with Vulkan',
  "(mesa-vulkan-drivers, or the GPU vendor's driver); on a machine without a GPU, install Debian's chromium",
  '(sudo apt-get install chromium): lwm finds the SwiftShader driver (Vulkan on the CPU) and the loader it ships.',
  'With a Vulkan driver that finds no device, LWM_FORCE_SWIFTSHADER=1 makes lwm use SwiftShader. `lwm gpu` checks the result.',
].join('\n');

let cached: GPU | null = null;

/** Dawn's GPU object, with WebGPU's global constants (GPUBufferUsage, ...) installed. */
export async function nodeGpu(): Promise<GPU> {
  if (cached) return cached;
  const dawn = (await import('webgpu')) as unknown as { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
  Object.assign(globalThis, dawn.globals);
  cached = dawn.create([]);
  return cached;
}

/** Makes navigator.gpu available in Node so shared code finds it as in a browser. */
export async function installNodeGpu(): Promise<GPU> {
  const gpu = await nodeGpu();
  const g = globalThis as { navigator?: { gpu?: GPU } };
  if (!g.navigator) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true, writable: true });
  } else if (!g.navigator.gpu) {
    Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
  }
  return gpu;
}

const keepers = new Map<string, DeviceKeeper>();

/**
 * A GPU runtime on Dawn; without an adapter, a WebGPUUnavailableError that says what to install
 * (NODE_WEBGPU_HELP). Runtimes opened one after another in this process share one kept device and
 * its compiled pipelines (DeviceKeeper); one opened while another is live gets a device of its own.
 */
export async function nodeRuntime(options: Omit<AcquireOptions, 'gpu' | 'help'> = {}): Promise<GpuRuntime> {
  const key = JSON.stringify(options);
  let keeper = keepers.get(key);
  if (!keeper) {
    keeper = new DeviceKeeper({ ...options, gpu: await nodeGpu(), help: NODE_WEBGPU_HELP });
    keepers.set(key, keeper);
  }
  return keeper.open();
}

/** Destroy the devices kept for the next runtime, so the process can end at once (lwm does after each command). */
export function closeNodeRuntimes(): void {
  for (const k of keepers.values()) k.close();
}
