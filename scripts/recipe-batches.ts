// The batches a recipe's first stage trains on, written for the reference trainer
// (scripts/reference_trainer.py) so that it trains exactly our rows: the same token ids, loss
// weights, loss normaliser, schedule and initial weights as `lwm train --recipe`.
//
//   npx tsx --import ./bin/raw-hook.mjs scripts/recipe-batches.ts --recipe quick --domain terminal --out DIR [--steps N]
//
// DIR/manifest.json       shapes, the schedule, AdamW's settings, the loss normaliser, the pad id
// DIR/init.safetensors    the starting checkpoint in our format (weights, tokenizer, template, spec)
// DIR/train.inputs.u16, train.targets.u16 (uint16), train.weights.f32 (float32): [steps, B, T]
// DIR/eval.*              the same for the eval_loss batches: [evalBatches, B, T]
//
// --steps N writes only the first N steps' batches (the schedule still spans the whole stage);
// --total-steps N makes the stage N steps long instead of the recipe's (a longer or shorter run,
// its schedule spanning N);
// --batch B replaces the recipe's rows per step (the GPU parity test's smaller batch); --mask JSON
// replaces mask settings (a recipe experiment, e.g. '{"ratios":{...}}'); --rows turn|trajectory
// replaces the recipe's row kind; --tasks F[,F…]|probed adds the recipe's task-play trajectories
// (`lwm train --recipe --tasks`, rows laid out for the Sim RL world's answer budget as there),
// --task-n N that many of them instead of the recipe's share; --task-solver-share X the share of
// them the reference solver plays (default 0.5; the rest are near misses and doing nothing);
// --seed N the run's seed instead of the recipe's (initial weights, split, row order; the same
// generated trajectories), a replicate of a recipe experiment;
// --answer-room N lays rows out as a generator leaving N tokens for its answer sees them
// (TrainSpec.answerRoom); --tasks-only trains on those task-play trajectories alone (a world model of the task families
// only, as `lwm gen --tasks` then `lwm train --data` would train it).
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { KnownDomain } from '../src/core/schema/types.ts';
import { ADAMW_DEFAULTS } from '../src/core/model/optim.ts';
import { paramLayout } from '../src/core/model/params.ts';
import { BatchSampler, type TokenBatch } from '../src/train/data.ts';
import { SOLVER_SHARE, taskPlayFamilies, taskPlayTrajectories } from '../src/envs/tasks/index.ts';
import { recipeByName, recipeSpecs, recipeTaskPlay, recipeTrajectories } from '../src/train/recipe.ts';
import { checkpointBytes, prepare, resolveSpec } from '../src/train/stages/common.ts';
import { evalBatchesOf } from '../src/train/stages/rows.ts';
import { supervisedRows } from '../src/train/stages/sft.ts';
import type { GpuRuntime } from '../src/gpu/runtime.ts';

const { values } = parseArgs({
  options: {
    recipe: { type: 'string', default: 'quick' },
    domain: { type: 'string', default: 'terminal' },
    out: { type: 'string' },
    steps: { type: 'string' },
    'total-steps': { type: 'string' },
    batch: { type: 'string' },
    mask: { type: 'string' },
    rows: { type: 'string' },
    tasks: { type: 'string' },
    'task-n': { type: 'string' },
    'tasks-only': { type: 'boolean' },
    'task-solver-share': { type: 'string' },
    seed: { type: 'string' },
    'answer-room': { type: 'string' },
  },
});
if (!values.out) throw new Error('--out DIR is required');
const recipe = recipeByName(values.recipe!);
const stage = recipeSpecs(recipe, values.domain as KnownDomain, { taskPlay: !!values.tasks })[0];
const spec = resolveSpec({
  ...stage,
  ...(values['total-steps'] && { steps: Number(values['total-steps']) }),
  ...(values.batch && { batch: Number(values.batch) }),
  ...(values.mask && { mask: JSON.parse(values.mask) }),
  ...(values.rows && { rows: values.rows as 'turn' | 'trajectory' }),
  ...(values['answer-room'] && { answerRoom: Number(values['answer-room']) }),
  ...(values.seed && { seed: Number(values.seed) }),
});
if (values['tasks-only'] && !(values.tasks && values['task-n']))
  throw new Error('--tasks-only needs --tasks F and --task-n N (the task-play trajectories to train on)');
if (values['task-solver-share'] && !(values.tasks && values['task-n']))
  throw new Error('--task-solver-share needs --tasks F and --task-n N (the task-play trajectories it shapes)');
const solverShare = values['task-solver-share'] === undefined ? SOLVER_SHARE : Number(values['task-solver-share']);
const trajectories = values['tasks-only'] ? [] : recipeTrajectories(recipe, values.domain as KnownDomain);
if (values.tasks) {
  const domain = values.domain as KnownDomain;
  const families = taskPlayFamilies(domain, values.tasks);
  trajectories.push(
    ...(values['task-n']
      ? taskPlayTrajectories(domain, families, Number(values['task-n']), recipe.dataSeed, solverShare)
      : recipeTaskPlay(recipe, domain, trajectories.length, families)),
  );
}
const p = prepare(spec, trajectories);
const log = (m: string) => process.stderr.write(m + '\n');
const host = { rt: undefined as unknown as GpuRuntime, step: async () => {}, metric: () => {}, log, checkpoint: () => {} };
const { rows, evalRows } = await supervisedRows(spec, p, host, undefined, {});
const sampler = new BatchSampler(rows, spec.batch, p.T, p.tok.special.pad, spec.seed);
const steps = values.steps ? Math.min(Number(values.steps), spec.steps) : spec.steps;
mkdirSync(values.out, { recursive: true });

/** Batches as three flat files (inputs, targets, weights), and a hash of their bytes. */
function writeBatches(prefix: string, batches: Iterable<TokenBatch>, count: number): string {
  const n = count * spec.batch * p.T;
  const inputs = new Uint16Array(n);
  const targets = new Uint16Array(n);
  const weights = new Float32Array(n);
  let k = 0;
  for (const b of batches) {
    inputs.set(b.inputs, k * b.inputs.length);
    targets.set(b.targets, k * b.targets.length);
    weights.set(b.weights, k * b.weights.length);
    k++;
  }
  const hash = createHash('sha256');
  for (const [ext, a] of [
    ['inputs.u16', inputs],
    ['targets.u16', targets],
    ['weights.f32', weights],
  ] as const) {
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    writeFileSync(join(values.out!, `${prefix}.${ext}`), bytes);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

function* trainBatches() {
  for (let k = 0; k < steps; k++) yield sampler.batch(k);
}
const evalBatches = evalBatchesOf(evalRows, spec.evalBatches, spec.batch, p.T, p.tok.special.pad).map((e) => e.batch);
const trainHash = writeBatches('train', trainBatches(), steps);
const evalHash = writeBatches('eval', evalBatches, evalBatches.length);
writeFileSync(join(values.out, 'init.safetensors'), checkpointBytes({ config: p.config, params: p.start.params, step: 0 }, p.tok, spec));
const layout = paramLayout(p.config);
const manifest = {
  recipe: recipe.name,
  domain: values.domain,
  data_seed: recipe.dataSeed,
  trajectories: trajectories.length,
  train_rows: rows.length,
  eval_rows: evalRows.rows.length,
  config: p.config,
  param_count: layout.paramCount,
  B: spec.batch,
  T: p.T,
  steps,
  total_steps: spec.steps,
  eval_every: spec.evalEvery,
  eval_batches: evalBatches.length,
  loss_norm: sampler.lossNorm,
  pad: p.tok.special.pad,
  schedule: { max_lr: spec.lr.peak, min_lr: spec.lr.min, warmup_steps: spec.lr.warmup, total_steps: spec.steps },
  adamw: {
    beta1: ADAMW_DEFAULTS.beta1,
    beta2: ADAMW_DEFAULTS.beta2,
    eps: ADAMW_DEFAULTS.eps,
    weight_decay: ADAMW_DEFAULTS.weightDecay,
    max_grad_norm: ADAMW_DEFAULTS.maxGradNorm,
  },
  decayed: layout.tensors.filter((t) => t.decay).map((t) => (t.name === 'wte' || t.name === 'wpe' ? `${t.name}.weight` : t.name)),
  sha256: { train: trainHash, eval: evalHash },
};
writeFileSync(join(values.out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
log(
  `${values.out}: ${steps} of ${spec.steps} steps of ${spec.batch} × ${p.T} tokens (${rows.length} train rows from ${trajectories.length} trajectories), ${evalBatches.length} eval batches, loss normaliser ${sampler.lossNorm.toFixed(2)}`,
);
