// Parity with the reference trainer (scripts/reference_trainer.py, PyTorch): from the same
// initial weights, on the same rows, the quick recipe's first steps give the same losses on our
// WebGPU engine as in PyTorch (relative 1e-3). The fixture holds PyTorch's losses for 20 steps (this
// test trains the first STEPS of them, to keep CI short) and a hash of the batches of all 20;
// this test builds the batches the way `lwm train --recipe` does, checks the hash (so a change to
// the rows says so instead of failing as a numeric mismatch), and trains. The recipe's batch of
// 16 rows is cut to the fixture's 2 so that CI's CPU-emulated adapter finishes in a minute; the
// model, tokenizer, template, rows, loss normaliser, AdamW and schedule are the recipe's. Regenerate the fixture with:
//   python scripts/reference_trainer.py --recipe quick --domain terminal --batch 2 --steps 20 \
//     --parity src/train/fixtures/quick-parity.json -o /tmp/parity.safetensors
// Dawn only (it reads node:crypto and is long): see vitest.config.ts.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { lrAt } from '../core/model/optim.ts';
import { BatchSampler, type TokenBatch } from './data.ts';
import { RECIPES, recipeSpecs, recipeTrajectories } from './recipe.ts';
import { createRunModel, prepare, resolveSpec, type TrainHost } from './stages/common.ts';
import { supervisedRows } from './stages/sft.ts';
import fixture from './fixtures/quick-parity.json' with { type: 'json' };

/** The fixture's steps trained here: every one a parity check of the loss and gradient norm (the schedule is still in its warm-up). */
const STEPS = 10;

/** The sha256 scripts/recipe-batches.ts writes: every step's inputs (u16), then targets (u16), then weights (f32). */
function batchesHash(batches: TokenBatch[]): string {
  const h = createHash('sha256');
  const bytes = (a: Uint16Array | Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  for (const b of batches) h.update(bytes(Uint16Array.from(b.inputs)));
  for (const b of batches) h.update(bytes(Uint16Array.from(b.targets)));
  for (const b of batches) h.update(bytes(b.weights));
  return h.digest('hex');
}

describe('the quick recipe against the reference trainer', () => {
  it(`gives PyTorch's losses for the first ${STEPS} steps (relative 1e-3), from the same weights on the same rows`, async () => {
    const rt = await gpuRuntime();
    const stage = recipeSpecs(RECIPES.quick, fixture.domain as 'terminal')[0];
    const spec = resolveSpec({ ...stage, batch: fixture.B });
    const p = prepare(spec, recipeTrajectories(RECIPES.quick, fixture.domain as 'terminal'));
    const host: TrainHost = { rt, step: async () => {}, metric: () => {}, log: () => {}, checkpoint: () => {} };
    const { rows } = await supervisedRows(spec, p, host, undefined, {});
    const sampler = new BatchSampler(rows, spec.batch, p.T, p.tok.special.pad, spec.seed);
    const batches = Array.from({ length: fixture.steps }, (_, k) => sampler.batch(k));
    expect(p.T).toBe(fixture.T);
    expect(batchesHash(batches), "the recipe's rows changed since the fixture was recorded: regenerate it (see the top of this file)").toBe(fixture.sha256);
    const model = await createRunModel(rt, p, { batch: spec.batch, T: p.T });
    const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps };
    const ours: number[] = [];
    try {
      for (let k = 0; k < STEPS; k++) {
        const lr = lrAt(k, schedule);
        expect(lr).toBeCloseTo(fixture.lrs[k], 12);
        const r = await model.trainStep(batches[k], lr, { loss: true, gradNorm: true });
        ours.push(r.loss!);
        expect(Math.abs(r.gradNorm! - fixture.grad_norms[k]) / fixture.grad_norms[k], `grad norm at step ${k + 1}`).toBeLessThan(1e-3);
      }
    } finally {
      model.dispose();
    }
    const worst = Math.max(...ours.map((l, k) => Math.abs(l - fixture.losses[k]) / fixture.losses[k]));
    console.log(
      `[parity] quick recipe, ${STEPS} steps of ${fixture.B} × ${fixture.T}: loss ${ours[0].toFixed(4)} → ${ours[ours.length - 1].toFixed(4)} (PyTorch ${fixture.losses[0].toFixed(4)} → ${fixture.losses[STEPS - 1].toFixed(4)}); worst relative difference ${worst.toExponential(2)}`,
    );
    ours.forEach((l, k) =>
      expect(Math.abs(l - fixture.losses[k]) / fixture.losses[k], `loss at step ${k + 1}: ours ${l}, PyTorch ${fixture.losses[k]}`).toBeLessThan(1e-3),
    );
    // The losses fall: the recipe learns from its first steps on.
    expect(ours[ours.length - 1]).toBeLessThan(ours[0]);
  });
});
