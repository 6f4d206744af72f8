// The two halves of a spilled workgroup grid agree: grid() (the host's 2-D split) and
// flat_group / flat_thread (shaders/grid.wgsl, the shader's flat index), on the device.
import { describe, expect, it } from 'vitest';
import { wgsl } from '../shaders.ts';
import { withScope } from '../testing/checkOp.ts';
import { gpuRuntime } from '../testing/runtime.ts';
import { withGridLimit } from '../testing/submit.ts';
import { grid, GRID_INCLUDE, makeBindGroup } from './common.ts';

// Every workgroup writes its flat index at that index; every thread of workgroup 0 its flat thread id.
const PROBE = wgsl(
  'grid_probe.wgsl',
  `// #include "grid.wgsl"
@group(0) @binding(0) var<storage, read_write> groups: array<u32>;
@group(0) @binding(1) var<storage, read_write> threads: array<u32>;
@compute @workgroup_size(4)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let w = flat_group(wg, nwg);
  if (w >= arrayLength(&groups)) { return; }
  if (lid == 0u) { groups[w] = w + 1u; }
  threads[flat_thread(wg, nwg, lid, 4u)] = w * 4u + lid + 1u;
}`,
  GRID_INCLUDE,
);

describe('workgroup grid', () => {
  it('grid() spills into y and flat_group numbers every workgroup once', async () => {
    const base = await gpuRuntime();
    for (const [limit, count] of [
      [5, 5],
      [5, 6],
      [5, 23],
      [65535, 7],
    ]) {
      const rt = withGridLimit(base, limit);
      const dims = grid(rt, count);
      expect(dims[0]).toBeLessThanOrEqual(limit);
      expect(dims[0] * dims[1]).toBeGreaterThanOrEqual(count);
      expect(dims[0] * (dims[1] - 1)).toBeLessThan(count);
      const pipeline = await base.pipeline(PROBE, 'main');
      await withScope(base, async (g) => {
        const groups = g.buffer('t.groups', count * 4);
        const threads = g.buffer('t.threads', dims[0] * dims[1] * 16);
        g.submit((pass) => {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, makeBindGroup(base, pipeline, [groups, threads]));
          pass.dispatchWorkgroups(dims[0], dims[1]);
        });
        expect(Array.from(await base.readU32(groups)), `${count} over limit ${limit}`).toEqual(Array.from({ length: count }, (_, i) => i + 1));
        expect(Array.from(await base.readU32(threads, count * 4))).toEqual(Array.from({ length: count * 4 }, (_, i) => i + 1));
      });
    }
  });
});
