import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../../envs/index.ts';
import { DOMAINS } from '../../core/schema/types.ts';
import { categorizeDataset, maskConfig } from '../../core/masking/index.ts';
import { categorize, computeFeatures } from './maskEngine.ts';

describe('viewer mask engine', () => {
  const trajectories = DOMAINS.flatMap((d) => generateTrajectories(d, 4, 7));
  // Overrides so the loss_weight_override branch is exercised too.
  trajectories[0].turns[0].metadata = { ...trajectories[0].turns[0].metadata, loss_weight_override: 0 };

  it('agrees with the data core on several configurations, reusing its cached features', async () => {
    const f = await computeFeatures(trajectories);
    const configs = [
      maskConfig(),
      maskConfig({ echoMinJaccard: 0.3, ratios: { echo: 1 } }),
      maskConfig({ boilerplateMinRecurrence: 2, boilerplateMaxChars: 50 }),
      maskConfig({ retrievalMinRatio: 1, useOverrides: false }),
      maskConfig(),
    ];
    for (const c of configs) expect(categorize(f, c)).toEqual(categorizeDataset(trajectories, c));
  });
});
