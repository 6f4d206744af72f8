// WebGPU in Node through Dawn (npm `webgpu`). Node-only: the app never imports this file.
// On machines whose only Vulkan driver is SwiftShader, start Node with the environment from
// scripts/chromium.mjs gpuEnv() (VK_ICD_FILENAMES etc.); `npm test` and `lwm` do.

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
