// GPT-2-style initialisation, seeded: the same seed gives the same bytes, so a GPU run and the
// CPU reference can start from identical weights and a test can name its starting point.
import { paramLayout, type ParamLayout, type ParamTensor } from '../core/model/params.ts';
import type { ModelConfig } from '../core/model/config.ts';
import { GaussianRng } from '../core/random.ts';

/** Standard deviation of every weight matrix and embedding (GPT-2). */
const INIT_STD = 0.02;

/** The standard deviation a tensor is drawn with, or null for a constant fill. */
function initStd(t: ParamTensor, layout: ParamLayout): number | null {
  if (t.kind === 'norm' || t.kind === 'bias') return null;
  // Residual projections write into the residual stream once per block per branch (2 per
  // layer); scaling them by 1/sqrt(2·layers) keeps the stream's variance independent of depth.
  if (t.name.endsWith('.c_proj.weight')) return INIT_STD / Math.sqrt(2 * layout.config.layers);
  return INIT_STD;
}

/**
 * Fresh parameters in the flat layout: matrices and embeddings ~ N(0, 0.02²) (residual
 * projections scaled down), biases 0, norm weights 1, norm biases 0, padding 0. Each tensor
 * draws from its own stream seeded by (seed, name), so adding a tensor to the layout leaves the
 * others' values unchanged.
 */
export function initParams(config: ModelConfig, seed: number | string = 0, layout: ParamLayout = paramLayout(config)): Float32Array {
  const flat = new Float32Array(layout.totalSize);
  for (const t of layout.tensors) {
    const view = flat.subarray(t.offset, t.offset + t.size);
    const std = initStd(t, layout);
    if (std === null) {
      view.fill(t.kind === 'norm' && t.name.endsWith('.weight') ? 1 : 0);
      continue;
    }
    const rng = new GaussianRng(`${String(seed)}/${t.name}`);
    for (let i = 0; i < view.length; i++) view[i] = std * rng.normal();
  }
  return flat;
}
