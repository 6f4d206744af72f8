// Mask weights mean the same in every batch (docs/method.md §4): the gradient a target token gets is its own
// weight over a normaliser that does not depend on the weights of the other tokens, so an echo
// token always carries `ratios.echo / ratios.retrieval` of a retrieval token's gradient, whatever
// the batch size and the mix of categories (and lengths) it was drawn with.
import { describe, expect, it } from 'vitest';
import { categorizeDataset, DEFAULT_MASK_CONFIG, type MaskCategory } from '../core/masking/index.ts';
import { emptySystemPrompt, type Trajectory } from '../core/schema/types.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { weightedCrossEntropy } from '../reference/gpt.ts';
import { BatchSampler, makeBatch, type EncodedRow } from './data.ts';
import { stageRows } from './pipeline.ts';

const traj = (id: string, turns: [string, string][]): Trajectory => ({
  id,
  domain: 'terminal',
  system_prompt: emptySystemPrompt(),
  turns: turns.map(([action, observation]) => ({ action, observation })),
});

const readme = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}: the invoice parser exports CSV files for team ${i % 7}`).join('\n');
const data: Trajectory[] = Array.from({ length: 6 }, (_, i) =>
  traj(`t${i}`, [
    // echo: the observation repeats the action (short)
    [`think(thought="the user wants the cheapest flight to city ${i}")`, `{"thought": "the user wants the cheapest flight to city ${i}"}`],
    // retrieval: long new content (long rows, a different length in each trajectory)
    [`cat docs/README-${i}.md`, readme(3 + 2 * i)],
    // transform, and a boilerplate turn, for a mix of other weights
    [`python3 -c "print(sorted([${i + 3}, 1, 2]))"`, `[1, 2, ${i + 3}]`],
    [`mkdir -p build/${i}`, ''],
  ]),
);

const tok = trainBpe(
  data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
  { vocabSize: 320 },
);
// Long enough that the longest retrieval targets (at most half a row under the truncation policy) still differ in length.
const T = 320;
const masks = categorizeDataset(data);
const categoryOf = new Map<string, MaskCategory>(masks.flatMap((m) => m.turns.map((t, i) => [`${m.id}#${i}`, t.category] as const)));
const rows = stageRows('sft', { tok, T }, data, { v0: 1 }, 0, false, undefined, new Map(masks.map((m) => [m.id, m])));

/** ∂objective/∂ℓ for every target token of a batch (zero logits: dlogits[tgt] = k·(1/V − 1)), by the row's category. */
function tokenGradients(picked: EncodedRow[], batch: ReturnType<BatchSampler['batch']>): { category: MaskCategory; k: number }[] {
  const V = tok.vocabSize;
  const ce = weightedCrossEntropy(new Float64Array(batch.B * batch.T * V), batch, V);
  const out: { category: MaskCategory; k: number }[] = [];
  for (let r = 0; r < batch.B; r++) {
    const category = categoryOf.get(`${picked[r].trajectoryId}#${picked[r].turnIndex}`)!;
    for (let t = 0; t < batch.T; t++) {
      const i = r * batch.T + t;
      if (batch.weights[i] > 0) out.push({ category, k: -ce.dlogits[i * V + batch.targets[i]] / (1 - 1 / V) });
    }
  }
  return out;
}

describe('loss normalisation: a mask weight means the same in every batch', () => {
  it('the categories and lengths are mixed as the test needs', () => {
    const cats = rows.map((r) => categoryOf.get(`${r.trajectoryId}#${r.turnIndex}`));
    expect(new Set(cats)).toEqual(new Set(['echo', 'retrieval', 'transform', 'boilerplate']));
    const lengths = new Set(rows.filter((_, i) => cats[i] === 'retrieval').map((r) => r.weights.filter((w) => w > 0).length));
    expect(lengths.size).toBeGreaterThan(3);
    expect(rows.every((r) => r.ids.length <= T + 1)).toBe(true);
  });

  for (const B of [1, 2, 8]) {
    it(`echo : retrieval per-token gradient is the configured ratio at batch ${B}`, () => {
      const sampler = new BatchSampler(rows, B, T, tok.special.pad, 3);
      // Which rows each batch holds: the sampler's order, recovered by matching inputs.
      const key = (ids: ArrayLike<number>) => Array.from(ids).join(',');
      const byInputs = new Map(rows.map((r) => [key(makeBatch([r], T, tok.special.pad).inputs), r]));
      const echo: number[] = [];
      const retrieval: number[] = [];
      for (let k = 0; k < 48 / B; k++) {
        const batch = sampler.batch(k);
        const picked = Array.from({ length: B }, (_, r) => byInputs.get(key(batch.inputs.subarray(r * T, (r + 1) * T)))!);
        for (const g of tokenGradients(picked, batch)) {
          if (g.category === 'echo') echo.push(g.k);
          if (g.category === 'retrieval') retrieval.push(g.k);
        }
      }
      expect(echo.length).toBeGreaterThan(0);
      expect(retrieval.length).toBeGreaterThan(0);
      const want = DEFAULT_MASK_CONFIG.ratios.echo / DEFAULT_MASK_CONFIG.ratios.retrieval;
      // Every echo token against every retrieval token, across all batches of this size.
      const lo = Math.min(...echo) / Math.max(...retrieval);
      const hi = Math.max(...echo) / Math.min(...retrieval);
      expect(Math.abs(lo / want - 1), `lowest ratio ${lo}`).toBeLessThan(0.01);
      expect(Math.abs(hi / want - 1), `highest ratio ${hi}`).toBeLessThan(0.01);
    });
  }

  it('a batch without a run normaliser divides by its own target tokens, never by Σ w', () => {
    const b = makeBatch(rows.slice(0, 3), T, tok.special.pad);
    expect(b.lossNorm).toBe(Array.from(b.weights).filter((w) => w > 0).length);
    expect(b.lossNorm).not.toBeCloseTo(b.weightSum, 3);
  });

  it('CPT (every weight 1, full rows): the normaliser is B·T and the objective the plain mean', () => {
    const cpt: EncodedRow[] = Array.from({ length: 5 }, (_, i) => {
      const ids = Array.from({ length: 9 }, (_, j) => (i * 9 + j) % 50);
      return { ids, weights: ids.map((_, j) => (j === 0 ? 0 : 1)), promptLength: 0, droppedTurns: 0, truncated: false };
    });
    const sampler = new BatchSampler(cpt, 2, 8, 0);
    expect(sampler.lossNorm).toBe(16);
    const batch = sampler.batch(1);
    const V = 50;
    const logits = Float64Array.from({ length: 16 * V }, (_, i) => Math.sin(i * 0.37));
    const ce = weightedCrossEntropy(logits, batch, V);
    const plain = ce.tokenLoss.reduce((a, b) => a + b, 0) / 16;
    expect(ce.objective).toBeCloseTo(plain, 12);
    expect(ce.loss).toBeCloseTo(plain, 12);
  });
});
