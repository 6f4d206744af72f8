// Recipes: a whole training run under one name: the data (freshly generated trajectories of the
// built-in environments), the model, the tokenizer, the template and context layout, the stages
// with their steps, batch and learning-rate schedule. `lwm train --recipe NAME`, the Train view's
// one-click default and the reference trainer (scripts/reference_trainer.py, through
// scripts/recipe-batches.ts) all read the recipe from here, so the three train the same rows.
//
// Data is unlimited and compute is not: a recipe generates as many trajectories as its steps
// consume, so no training row is seen twice (docs/fidelity.md).
import { generateTrajectory } from '../envs/index.ts';
import { playableFamilies, taskPlayTrajectories } from '../envs/tasks/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../core/schema/types.ts';
import { paramCount, presetConfig, trainStepFlops } from '../core/model/config.ts';
import type { TrainSpec } from '../core/trainSpec.ts';
import { defaultAnswerTokens } from '../core/backend.ts';

/** A stage of a recipe: a TrainSpec without the data selection (the recipe's domain fills it in). */
export type RecipeStage = Omit<TrainSpec, 'kind' | 'domains'> &
  Required<Pick<TrainSpec, 'batch' | 'T' | 'vocabSize' | 'evalEvery'>> & {
    /**
     * Turns one row trains, for sizing the data: 1 for turn rows; for trajectory rows the mean a
     * row covers at this context (measured, docs/fidelity.md), so the data holds that many more
     * turns and no row is seen twice. Default 1.
     */
    turnsPerRow?: number;
  };

export interface Recipe {
  name: string;
  /** One sentence for the Train view and `lwm train --help`. */
  summary: string;
  /** The `lwm gen` seed of the training data; evaluation uses other seeds (docs/fidelity.md). */
  dataSeed: number;
  stages: readonly RecipeStage[];
}

/**
 * Sustained throughput the time estimates assume for a laptop-class GPU on our kernels at these
 * sizes (a tenth or less of such a GPU's peak f32 rate: the matrices are 128 wide).
 */
export const LAPTOP_GPU_FLOPS = 2e11;

/**
 * The quick recipe: one SFT stage of the `quick` preset (GPT-2 blocks, 4 × 128, BPE 1,024,
 * context 256) on fresh trajectories of one domain, every row new, the compact template, the
 * mask's weights on the observation. 2,000 steps of 16 rows: 8.2M tokens, ~5e13 FLOPs.
 */
const QUICK: Recipe = {
  name: 'quick',
  summary: 'a ~1M-parameter world model of one domain from freshly generated trajectories: about 4 minutes on a laptop GPU',
  dataSeed: 7001,
  stages: [
    {
      stage: 'sft',
      preset: 'quick',
      vocabSize: 1024,
      steps: 2000,
      batch: 16,
      T: 256,
      lr: { peak: 3e-3, min: 3e-4, warmup: 50 },
      evalEvery: 250,
      evalBatches: 4,
      evalJudgeSamples: 8,
      evalFraction: 0.05,
      seed: 0,
      templates: { compact: 1 },
      evalTemplates: { compact: 1 },
      rows: 'trajectory',
    },
  ],
};

export const RECIPES: Readonly<Record<string, Recipe>> = Object.freeze({ quick: QUICK });

export type RecipeName = keyof typeof RECIPES;

/** The recipe called `name`, or an error that lists the known ones. */
export function recipeByName(name: string): Recipe {
  if (!Object.hasOwn(RECIPES, name)) throw new Error(`unknown recipe '${name}'; known: ${Object.keys(RECIPES).join(', ')}`);
  return RECIPES[name];
}

/**
 * The run specs of a recipe on one domain, in stage order. With task play (a world model for Sim
 * RL), SFT rows are laid out for the answer budget a Sim RL world gives the model (answerRoom: a
 * quarter of the context, defaultAnswerTokens): a world model trained on rows whose prompt
 * took all the room a short observation left answered the world's shorter prompts wrongly
 * (docs/method.md §13).
 */
export function recipeSpecs(recipe: Recipe, domain: KnownDomain, options: { taskPlay?: boolean } = {}): TrainSpec[] {
  // turnsPerRow sizes the data; the run itself does not read it.
  return recipe.stages.map(({ turnsPerRow: _sizing, ...s }) => ({
    ...s,
    kind: 'train',
    domains: [domain],
    ...(options.taskPlay && s.stage === 'sft' && s.T !== undefined && { answerRoom: s.answerRoom ?? defaultAnswerTokens(s.T) }),
  }));
}

/** Rows a stage trains on: steps × batch. */
export function stageRows(s: RecipeStage): number {
  return s.steps * s.batch;
}

/** Turns a stage trains on: its rows × the turns a row trains. */
export function stageTurns(s: RecipeStage): number {
  return stageRows(s) * (s.turnsPerRow ?? 1);
}

/** Turns the recipe's longest stage consumes from the train split, plus its eval share. */
export function recipeTurnsNeeded(recipe: Recipe): number {
  return Math.max(...recipe.stages.map((s) => stageTurns(s) / (1 - (s.evalFraction ?? 0.1))));
}

/**
 * The recipe's trajectories one at a time: `lwm gen --domain D --seed dataSeed` from index 0 until
 * the train split (1 − evalFraction of them) holds more turns than the longest stage consumes, so
 * every row is new. Deterministic: the same recipe and domain give the same trajectories, and
 * trajectory i is `generateTrajectory(domain, dataSeed, i)` whatever the recipe's steps, so a
 * stored run regenerates its own data from its seed and count (recipeData).
 */
export function* recipeTrajectoryStream(recipe: Recipe, domain: KnownDomain): Generator<Trajectory> {
  if (!(DOMAINS as readonly string[]).includes(domain)) throw new Error(`unknown domain '${domain}'; known: ${DOMAINS.join(', ')}`);
  const need = recipeTurnsNeeded(recipe);
  let turns = 0;
  for (let i = 0; turns < need; i++) {
    const t = generateTrajectory(domain, recipe.dataSeed, i);
    turns += t.turns.length;
    yield t;
  }
}

/** The recipe's trajectories for a domain, all at once (recipeTrajectoryStream). */
export function recipeTrajectories(recipe: Recipe, domain: KnownDomain, onProgress?: (done: number) => void): Trajectory[] {
  const out: Trajectory[] = [];
  for (const t of recipeTrajectoryStream(recipe, domain)) {
    out.push(t);
    if (onProgress && out.length % 500 === 0) onProgress(out.length);
  }
  return out;
}

/** Task-play trajectories a recipe adds per trajectory of its own when asked for (`lwm train --recipe --tasks`). */
export const TASK_PLAY_SHARE = 1;

/**
 * Task-play trajectories for a recipe's data (docs/method.md §13): TASK_PLAY_SHARE of `count`
 * (the recipe's own trajectories) of the domain's `families` (all with a probe when left out),
 * from the recipe's data seed. A world model trained on them has seen what each family's probe
 * shows after the solver's attempt and after near misses, which a Sim RL reward asks of it.
 */
export function recipeTaskPlay(recipe: Recipe, domain: KnownDomain, count: number, families?: readonly string[]): Trajectory[] {
  return taskPlayTrajectories(domain, playableFamilies(domain, families), taskPlayCount(count), recipe.dataSeed);
}

/** How many task-play trajectories join a recipe's `count` own: TASK_PLAY_SHARE of them. */
export function taskPlayCount(count: number): number {
  return Math.round(TASK_PLAY_SHARE * count);
}

/** Trajectory `index` of a recipe's data: what a stored recipe run regenerates (its domain, seed and count). */
export function recipeTrajectory(domain: KnownDomain, dataSeed: number, index: number): Trajectory {
  return generateTrajectory(domain, dataSeed, index);
}

/** What a recipe costs: parameters, tokens and FLOPs per stage and in all, and the time at a throughput. */
export interface RecipeCost {
  params: number;
  tokens: number;
  flops: number;
  /** FLOPs of one step of each stage. */
  stepFlops: number[];
  steps: number[];
}

export function recipeCost(recipe: Recipe): RecipeCost {
  const stepFlops = recipe.stages.map((s) => trainStepFlops(presetConfig(s.preset, { vocabSize: s.vocabSize }), s.batch, s.T));
  const steps = recipe.stages.map((s) => s.steps);
  const first = recipe.stages[0];
  return {
    params: paramCount(presetConfig(first.preset, { vocabSize: first.vocabSize })),
    tokens: recipe.stages.reduce((n, s) => n + s.steps * s.batch * s.T, 0),
    flops: stepFlops.reduce((n, f, i) => n + f * steps[i], 0),
    stepFlops,
    steps,
  };
}

/** Seconds a recipe takes at `flopsPerSecond` of sustained training throughput. */
export function recipeSeconds(recipe: Recipe, flopsPerSecond: number): number {
  return recipeCost(recipe).flops / flopsPerSecond;
}
