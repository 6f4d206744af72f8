import { describe, expect, it } from 'vitest';
import { ShaderCompileError } from './errors.ts';
import { makeBindGroup } from './kernels/common.ts';
import { wgsl } from './shaders.ts';
import { DeviceKeeper } from './runtime.ts';
import { gpuRuntime } from './testing/runtime.ts';

describe('GpuRuntime', () => {
  it('reports the adapter and the limits training needs', async () => {
    const rt = await gpuRuntime();
    expect(rt.report.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 << 20);
    expect(rt.report.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(256);
    expect(typeof rt.report.features.timestampQuery).toBe('boolean');
    expect(rt.describe().length).toBeGreaterThan(0);
  });

  it('accounts for buffers: live count, bytes, peak, explicit release', async () => {
    const rt = await gpuRuntime();
    const base = rt.stats();
    const a = rt.storage('acct.a', 1000);
    const b = rt.storage('acct.b', new Float32Array(10));
    let s = rt.stats();
    expect(s.live).toBe(base.live + 2);
    expect(s.bytes).toBe(base.bytes + 1000 + 40);
    expect(s.byLabel.acct).toBe(1040);
    rt.release(a, b);
    s = rt.stats();
    expect(s.live).toBe(base.live);
    expect(s.bytes).toBe(base.bytes);
    expect(s.peakBytes).toBeGreaterThanOrEqual(base.bytes + 1040);
  });

  it('round-trips data through a buffer', async () => {
    const rt = await gpuRuntime();
    const data = new Float32Array([1.5, -2, 3.25, 1e-20, 7]);
    const buf = rt.storage('roundtrip', data);
    expect(Array.from(await rt.readF32(buf))).toEqual(Array.from(data));
    expect(Array.from(await rt.readF32(buf, 2, 2))).toEqual([3.25, 1e-20].map(Math.fround));
    rt.release(buf);
  });

  it('names the shader file and line of a WGSL error', async () => {
    const rt = await gpuRuntime();
    const bad = wgsl('broken-example.wgsl', '// line 1\n@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = undefined_thing;\n}\n');
    const err = await rt.pipeline(bad, 'main').catch((e) => e);
    expect(err).toBeInstanceOf(ShaderCompileError);
    expect((err as Error).message).toMatch(/shaders\/broken-example\.wgsl:4:\d+: error: .*undefined_thing/);
  });

  it('names the included file and its own line for an error inside an #include', async () => {
    const rt = await gpuRuntime();
    const common = '// shared 1\n// shared 2\nfn helper() -> f32 {\n  return missing_in_include;\n}\n';
    const bad = wgsl('includer-example.wgsl', '// line 1\n// #include "common-example.wgsl"\n@compute @workgroup_size(1)\nfn main() { _ = helper(); }\n', {
      'common-example.wgsl': common,
    });
    const err = await rt.pipeline(bad, 'main').catch((e) => e);
    expect(err).toBeInstanceOf(ShaderCompileError);
    expect((err as Error).message).toMatch(/shaders\/common-example\.wgsl:4:\d+: error: .*missing_in_include/);
    expect((err as Error).message).not.toContain('includer-example.wgsl:');
  });

  it('names the including file and its own line for an error after an #include', async () => {
    const rt = await gpuRuntime();
    const common = '// shared 1\n// shared 2\nfn helper2() -> f32 {\n  return 1.0;\n}\n';
    const bad = wgsl(
      'includer2-example.wgsl',
      '// line 1\n// #include "common2-example.wgsl"\n@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = helper2() + missing_in_main;\n}\n',
      {
        'common2-example.wgsl': common,
      },
    );
    const err = await rt.pipeline(bad, 'main').catch((e) => e);
    expect(err).toBeInstanceOf(ShaderCompileError);
    const e = err as ShaderCompileError;
    expect(e.message).toMatch(/shaders\/includer2-example\.wgsl:5:\d+: error: .*missing_in_main/);
    expect(e.messages[0].source).toContain('missing_in_main');
  });

  it('names the shader file when an entry point is missing', async () => {
    const rt = await gpuRuntime();
    const ok = wgsl('tiny-example.wgsl', '@compute @workgroup_size(1)\nfn main() {}\n');
    const err = await rt.pipeline(ok, 'nope').catch((e) => e);
    expect((err as Error).message).toContain('shaders/tiny-example.wgsl');
    expect((err as Error).message).toContain("'nope'");
  });

  it('caches pipelines by shader, entry point and constants', async () => {
    const rt = await gpuRuntime();
    const src = wgsl(
      'cache-example.wgsl',
      'override X: u32 = 1u;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n@compute @workgroup_size(1)\nfn main() { o[0] = X; }\n',
    );
    const p1 = await rt.pipeline(src, 'main', { X: 3 });
    const p2 = await rt.pipeline(src, 'main', { X: 3 });
    const p3 = await rt.pipeline(src, 'main', { X: 4 });
    expect(p1).toBe(p2);
    expect(p3).not.toBe(p1);
    const out = rt.storage('cache.out', 4);
    const t = await rt.timed((enc, ts) => {
      const pass = enc.beginComputePass({ timestampWrites: ts.first && { ...ts.first, endOfPassWriteIndex: 1 } });
      pass.setPipeline(p3);
      pass.setBindGroup(0, makeBindGroup(rt, p3, [out]));
      pass.dispatchWorkgroups(1);
      pass.end();
    });
    expect(t.wallMs).toBeGreaterThanOrEqual(0);
    if (rt.report.features.timestampQuery) expect(t.gpuMs === null || t.gpuMs >= 0).toBe(true);
    expect(Array.from(await rt.readU32(out))).toEqual([4]);
    rt.release(out);
  });
});

describe('DeviceKeeper', () => {
  const SRC = wgsl(
    'keeper-example.wgsl',
    '@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n@compute @workgroup_size(1)\nfn main() { o[0] = 7u; }\n',
  );

  async function runOnce(rt: Awaited<ReturnType<DeviceKeeper['open']>>): Promise<number> {
    const p = await rt.pipeline(SRC, 'main');
    const out = rt.storage('keeper.out', 4);
    const enc = rt.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(p);
    pass.setBindGroup(0, makeBindGroup(rt, p, [out]));
    pass.dispatchWorkgroups(1);
    pass.end();
    rt.device.queue.submit([enc.finish()]);
    return (await rt.readU32(out))[0];
  }

  it('lends one device to runtimes opened one after another, with its compiled pipelines; each frees its own buffers', async () => {
    const keeper = new DeviceKeeper();
    try {
      const a = await keeper.open();
      expect(keeper.idle).toBe(false);
      expect(await runOnce(a)).toBe(7);
      const pa = await a.pipeline(SRC, 'main');
      const held = a.storage('keeper.held', 16);
      a.dispose();
      expect(keeper.idle).toBe(true);
      expect(a.stats().live).toBe(0);
      const b = await keeper.open();
      // The buffer went with its runtime (writing it is an error now); the device did not.
      b.device.pushErrorScope('validation');
      b.device.queue.writeBuffer(held, 0, new Uint32Array(4));
      expect(await b.device.popErrorScope()).not.toBeNull();
      expect(b.device).toBe(a.device);
      expect(await b.pipeline(SRC, 'main')).toBe(pa);
      expect(await runOnce(b)).toBe(7);
      expect(b.stats().live).toBe(1);
      b.dispose();
    } finally {
      keeper.close();
    }
  });

  it('a runtime opened while the kept device is lent gets its own device, destroyed with it', async () => {
    const keeper = new DeviceKeeper();
    try {
      const a = await keeper.open();
      const b = await keeper.open();
      expect(b.device).not.toBe(a.device);
      expect(await runOnce(b)).toBe(7);
      const lost = b.device.lost;
      b.dispose();
      expect((await lost).reason).toBe('destroyed');
      a.dispose();
      expect(keeper.idle).toBe(true);
    } finally {
      keeper.close();
    }
  });

  it('a lost kept device is not lent again; its runtime hears of the loss, and a runtime disposed before it does not', async () => {
    const keeper = new DeviceKeeper();
    try {
      const first = await keeper.open();
      const stale: string[] = [];
      first.on((e) => stale.push(e.type));
      first.dispose();
      const a = await keeper.open();
      const events: string[] = [];
      a.on((e) => events.push(e.type));
      a.device.destroy();
      await a.device.lost;
      await new Promise((r) => setTimeout(r, 0));
      expect(events).toEqual(['lost']);
      expect(stale).toEqual([]);
      expect(a.lost).not.toBeNull();
      a.dispose();
      expect(keeper.idle).toBe(false);
      const b = await keeper.open();
      expect(b.device).not.toBe(a.device);
      expect(await runOnce(b)).toBe(7);
      b.dispose();
    } finally {
      keeper.close();
    }
  });

  it('a released device is destroyed after the idle time unless a runtime takes it first', async () => {
    const keeper = new DeviceKeeper({}, 50);
    const a = await keeper.open();
    const device = a.device;
    a.dispose();
    const b = await keeper.open();
    expect(b.device).toBe(device);
    b.dispose();
    expect((await device.lost).reason).toBe('destroyed');
    expect(keeper.idle).toBe(false);
  });
});
