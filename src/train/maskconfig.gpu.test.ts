// The loss mask's settings reach training: a TrainSpec's `mask` decides the row weights, and the
// SFT checkpoint records it in its metadata (`mask_config`, the file format of docs/masking.md).
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { DEFAULT_MASK_CONFIG, maskConfig, parseMaskConfig } from '../core/masking/index.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { loadCheckpoint } from '../core/model/checkpoint.ts';
import { runTraining, type TrainSpec } from './pipeline.ts';

const data = generateTrajectories('search', 8, 2);
const SFT: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  vocabSize: 300,
  steps: 1,
  batch: 2,
  T: 32,
  evalEvery: 1,
  evalBatches: 1,
  evalJudgeSamples: 0,
  seed: 0,
};

async function run(spec: TrainSpec) {
  const rt = await gpuRuntime();
  const logs: string[] = [];
  const metrics: Record<string, number> = {};
  const r = await runTraining(spec, data, {
    rt,
    step: async () => {},
    log: (m) => logs.push(m),
    metric: (_, v) => Object.assign(metrics, v),
    checkpoint: () => {},
  });
  return { logs, metrics, meta: loadCheckpoint(r.checkpoint).extraMetadata! };
}

describe('mask settings reach SFT', () => {
  it('the spec’s ratios weigh the rows, and the checkpoint keeps them', async () => {
    const zero = maskConfig({ useOverrides: false, ratios: { retrieval: 0, expansion: 0, action: 0, transform: 0, other: 0, boilerplate: 0, echo: 0 } });
    const off = await run({ ...SFT, mask: zero });
    // Every target weighs 0 under this mask: nothing to learn, a loss of 0.
    expect(off.metrics.loss).toBe(0);
    expect(off.metrics.eval_loss).toBe(0);
    expect(parseMaskConfig(off.meta.mask_config, 'metadata')).toEqual(zero);
    expect(JSON.parse(off.meta.spec).mask).toEqual(zero);
    expect(off.logs.join('\n')).toMatch(/loss mask: ratios\.retrieval 0, .*useOverrides false/);

    const on = await run(SFT);
    expect(on.metrics.loss).toBeGreaterThan(0);
    expect(parseMaskConfig(on.meta.mask_config, 'metadata')).toEqual(DEFAULT_MASK_CONFIG);
    expect(on.logs.join('\n')).toContain('loss mask: the default thresholds and ratios');
  });
});
