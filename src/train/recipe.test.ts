import { describe, expect, it } from 'vitest';
import { defaultAnswerTokens } from '../core/backend.ts';
import { generateTrajectory } from '../envs/index.ts';
import { presetConfig, trainStepFlops } from '../core/model/config.ts';
import { taskPlayTrajectories } from '../envs/tasks/index.ts';
import {
  LAPTOP_GPU_FLOPS,
  RECIPES,
  recipeByName,
  recipeCost,
  recipeSeconds,
  recipeSpecs,
  recipeTaskPlay,
  recipeTrajectories,
  stageTurns,
  TASK_PLAY_SHARE,
  type Recipe,
} from './recipe.ts';
import { resolveSpec } from './stages/common.ts';

/** The quick recipe cut to a few steps, so the data it needs is generated in milliseconds. */
const small: Recipe = { ...RECIPES.quick, stages: [{ ...RECIPES.quick.stages[0], steps: 5, batch: 4 }] };

describe('recipes', () => {
  it('looks a recipe up by name, and names the known ones for an unknown one', () => {
    expect(recipeByName('quick')).toBe(RECIPES.quick);
    expect(() => recipeByName('slow')).toThrow(/unknown recipe 'slow'; known: quick/);
    expect(() => recipeByName('__proto__')).toThrow(/unknown recipe/);
  });

  it('with task play, lays its SFT rows out for the answer budget a Sim RL world gives the model', () => {
    expect(recipeSpecs(RECIPES.quick, 'terminal')[0]).not.toHaveProperty('answerRoom');
    const played = recipeSpecs(RECIPES.quick, 'terminal', { taskPlay: true })[0];
    expect(played.answerRoom).toBe(defaultAnswerTokens(256));
    expect(played.answerRoom).toBe(64);
    expect(resolveSpec(played).answerRoom).toBe(64);
  });

  it('gives every stage a spec the pipeline accepts, on the one domain asked for', () => {
    const specs = recipeSpecs(RECIPES.quick, 'mcp');
    expect(specs.length).toBe(RECIPES.quick.stages.length);
    for (const s of specs) {
      expect(s.kind).toBe('train');
      expect(s.domains).toEqual(['mcp']);
      const r = resolveSpec(s);
      // The recipe trains and evaluates in one template layout: the checkpoint is served in it.
      expect(r.templates).toEqual({ compact: 1 });
      expect(r.evalTemplates).toEqual({ compact: 1 });
      expect(r.lr.warmup).toBeLessThan(r.steps);
      // Trajectory rows; the data's sizing stays with the recipe.
      expect(r.rows).toBe('trajectory');
      expect('turnsPerRow' in s).toBe(false);
    }
  });

  it('sizes the data by the turns a row trains: a trajectory row covers several', () => {
    const s = { ...RECIPES.quick.stages[0], turnsPerRow: 3.5 };
    expect(stageTurns(s)).toBe(s.steps * s.batch * 3.5);
    expect(stageTurns({ ...s, turnsPerRow: undefined })).toBe(s.steps * s.batch);
    // More turns per row, more trajectories generated.
    const few = recipeTrajectories({ ...small, stages: [{ ...small.stages[0], turnsPerRow: 1 }] }, 'terminal');
    const more = recipeTrajectories({ ...small, stages: [{ ...small.stages[0], turnsPerRow: 3 }] }, 'terminal');
    expect(more.length).toBeGreaterThan(few.length);
    expect(recipeSpecs({ ...small, stages: [{ ...small.stages[0], turnsPerRow: 3 }] }, 'terminal')[0]).not.toHaveProperty('turnsPerRow');
  });

  it('generates exactly the trajectories `lwm gen --seed dataSeed` gives, enough for every row to be new', () => {
    const ts = recipeTrajectories(small, 'terminal');
    const s = small.stages[0];
    const trainTurns = ts.reduce((n, t) => n + t.turns.length, 0) * (1 - s.evalFraction!);
    expect(trainTurns).toBeGreaterThanOrEqual(stageTurns(s));
    // One trajectory fewer would not be enough (no more are generated than needed).
    const fewer = ts.slice(0, -1).reduce((n, t) => n + t.turns.length, 0) * (1 - s.evalFraction!);
    expect(fewer).toBeLessThan(stageTurns(s));
    ts.forEach((t, i) => expect(t).toEqual(generateTrajectory('terminal', small.dataSeed, i)));
    expect(recipeTrajectories(small, 'terminal')).toEqual(ts);
  });

  it('adds task-play trajectories on request: as many as its own, exactly those `lwm gen --tasks --seed dataSeed` gives', () => {
    const play = recipeTaskPlay(RECIPES.quick, 'terminal', 9, ['write_word']);
    expect(play).toHaveLength(Math.round(9 * TASK_PLAY_SHARE));
    expect(play).toEqual(taskPlayTrajectories('terminal', ['write_word'], play.length, RECIPES.quick.dataSeed));
    expect(new Set(recipeTaskPlay(RECIPES.quick, 'terminal', 40).map((t) => String(t.metadata!.task).split('/')[1]))).toEqual(
      new Set(['write_word', 'make_dir']),
    );
    expect(() => recipeTaskPlay(RECIPES.quick, 'terminal', 4, ['record_env'])).toThrow(/has no probe/);
  });

  it('refuses a domain without an environment', () => {
    expect(() => recipeTrajectories(small, 'cooking' as never)).toThrow(/unknown domain 'cooking'; known: .*terminal/);
  });

  it('counts tokens and FLOPs from the stages: steps × batch × T, and steps × trainStepFlops', () => {
    const c = recipeCost(RECIPES.quick);
    const s = RECIPES.quick.stages[0];
    expect(c.tokens).toBe(s.steps * s.batch * s.T);
    expect(c.flops).toBe(s.steps * trainStepFlops(presetConfig('quick', { vocabSize: s.vocabSize }), s.batch, s.T));
    // The recipe is sized for about five minutes on a laptop GPU (docs/fidelity.md).
    expect(recipeSeconds(RECIPES.quick, LAPTOP_GPU_FLOPS) / 60).toBeGreaterThan(3);
    expect(recipeSeconds(RECIPES.quick, LAPTOP_GPU_FLOPS) / 60).toBeLessThan(8);
    expect(c.params).toBeGreaterThan(0.8e6);
    expect(c.params).toBeLessThan(1.1e6);
  });
});
