import { describe, expect, it, vi } from 'vitest';
import { fileURLToPath } from 'node:url';
import { main } from './main.ts';
import { captureIO } from './testing.ts';

describe('lwm main', () => {
  it('prints usage and exits 2 with no command', async () => {
    const io = captureIO();
    expect(await main([], io)).toBe(2);
    expect(io.stdout).toContain('lwm validate');
  });
  it('rejects an unknown command with exit 2', async () => {
    const io = captureIO();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.stderr).toContain("unknown command 'frobnicate'");
  });
});

// Commands that find no GPU adapter (Dawn's stand-in answers none): `lwm NAME:`, what WebGPU
// lacks and what to install, exit 1, and no stack (bin/lwm.mjs prints one only for what main throws).
vi.mock('../gpu/node.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../gpu/node.ts')>();
  const { GpuRuntime } = await import('../gpu/runtime.ts');
  const noAdapter = { requestAdapter: async () => null } as unknown as GPU;
  return { ...real, nodeRuntime: () => GpuRuntime.create({ gpu: noAdapter, help: real.NODE_WEBGPU_HELP }) };
});

describe('lwm main without a GPU adapter', () => {
  const FOLDER = fileURLToPath(new URL('../model/fixtures/hf/llama-chat', import.meta.url));
  it.each([
    ['generate', ['--model', FOLDER, '--prompt', 'hi']],
    ['gpu', []],
  ])('lwm %s says what to install, exit 1, no stack', async (name, args) => {
    const io = captureIO();
    expect(await main([name, ...args], io)).toBe(1);
    expect(io.stdout).toBe('');
    expect(io.stderr).toMatch(new RegExp(`^lwm ${name}: WebGPU found no GPU adapter\\.\n`));
    expect(io.stderr).toContain('sudo apt-get install libvulkan1');
    expect(io.stderr).toContain('sudo apt-get install chromium');
    expect(io.stderr).not.toMatch(/^\s+at /m);
    expect(io.stderr).not.toContain('chrome://');
  });
});
