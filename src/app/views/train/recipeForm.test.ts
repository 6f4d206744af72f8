// The Train view's quick-recipe choice: the default of a fresh form, the job it starts (the recipe
// and a domain, nothing the recipe fixes itself), and what the run panel and list say of its runs.
import { describe, expect, it } from 'vitest';
import { DOMAINS } from '../../../core/schema/types.ts';
import { DEFAULT_FORM } from '../../stores/trainForm.ts';
import { buildRecipeSpec, recipeTaskChoices } from './form.ts';
import { probedFamilies } from '../../../train/agent/simWorld.ts';
import { preparingText, recipeRunText } from './metrics.ts';

describe('Train form, quick recipe', () => {
  it('is the default: the quick recipe on the terminal domain', () => {
    expect(DEFAULT_FORM).toMatchObject({ mode: 'recipe', recipeDomain: 'terminal' });
    expect(DOMAINS).toHaveLength(7);
  });

  it('starts a recipe job: the recipe and the domain, named after them', () => {
    expect(buildRecipeSpec(DEFAULT_FORM, { webgpuProblem: null })).toEqual({
      spec: { kind: 'train', recipe: { name: 'quick', domain: 'terminal' }, name: 'Quick recipe · terminal' },
      errors: {},
    });
    expect(buildRecipeSpec({ recipeDomain: 'web', recipeTasks: '', name: ' my web model ' }, { webgpuProblem: null }).spec).toEqual({
      kind: 'train',
      recipe: { name: 'quick', domain: 'web' },
      name: 'my web model',
    });
  });

  it('adds task play of one family or of every family with a check, for a Sim RL world model', () => {
    expect(recipeTaskChoices('terminal')).toEqual(
      probedFamilies()
        .filter((f) => f.startsWith('terminal/'))
        .map((f) => f.slice('terminal/'.length)),
    );
    expect(recipeTaskChoices('terminal')).toContain('write_word');
    expect(buildRecipeSpec({ recipeDomain: 'terminal', recipeTasks: 'write_word', name: '' }, { webgpuProblem: null }).spec).toEqual({
      kind: 'train',
      recipe: { name: 'quick', domain: 'terminal', tasks: ['write_word'] },
      name: 'Quick recipe · terminal · task play',
    });
    expect(buildRecipeSpec({ recipeDomain: 'terminal', recipeTasks: 'probed', name: '' }, { webgpuProblem: null }).spec?.recipe.tasks).toEqual(
      recipeTaskChoices('terminal'),
    );
    // A family that is not one of the domain's is named, with the choices there are.
    const typo = buildRecipeSpec({ recipeDomain: 'terminal', recipeTasks: 'write_wrod', name: '' }, { webgpuProblem: null });
    expect(typo.spec).toBeNull();
    expect(typo.errors.recipeTasks).toBe(
      `'write_wrod' is not a task family of terminal with a check to play; pick none, all, or one of ${recipeTaskChoices('terminal').join(', ')}.`,
    );
    // The tool server's probed families play as well.
    expect(recipeTaskChoices('mcp')).toEqual(['write_file', 'add_event']);
    expect(buildRecipeSpec({ recipeDomain: 'mcp', recipeTasks: 'add_event', name: '' }, { webgpuProblem: null }).spec?.recipe.tasks).toEqual(['add_event']);
    // A domain without probed families (task play left on from terminal) says so.
    expect(recipeTaskChoices('search')).toEqual([]);
    for (const recipeTasks of ['write_word', 'probed'])
      expect(buildRecipeSpec({ recipeDomain: 'search', recipeTasks, name: '' }, { webgpuProblem: null }).errors).toEqual({
        recipeTasks: 'No task family of search has a check to play yet; pick none.',
      });
  });

  it('names a bad domain and a missing WebGPU', () => {
    const bad = buildRecipeSpec({ recipeDomain: 'chess' as never, recipeTasks: '', name: '' }, { webgpuProblem: 'navigator.gpu is missing.' });
    expect(bad.spec).toBeNull();
    expect(bad.errors).toEqual({
      webgpu: 'navigator.gpu is missing.',
      recipeDomain: "Pick the domain the recipe trains on: mcp, search, terminal, swe, android, web, os; got 'chess'.",
    });
  });

  it('the run panel says what the worker is doing before the first step', () => {
    expect(preparingText({ kind: 'generate', domain: 'terminal', done: 12000, total: 33685, unit: 'turns' })).toBe(
      'Generating terminal trajectories for the recipe: 12,000 of 33,685 turns…',
    );
    expect(preparingText({ kind: 'generate', domain: 'web', done: 500, total: 3400, unit: 'trajectories' })).toBe(
      'Regenerating the run’s web trajectories: 500 of 3,400…',
    );
    expect(preparingText({ kind: 'generate', domain: 'os', done: 3400, total: 3400, unit: 'trajectories' })).toBe(
      'Generated the os trajectories; training the tokenizer and building the model…',
    );
    expect(preparingText({ kind: 'stage', runId: 'r-stage2', stage: 1, stages: 2 })).toBeNull();
    expect(preparingText(null)).toBeNull();
  });

  it('a recipe run says so in the run list and panel', () => {
    expect(recipeRunText({ recipe: { name: 'quick', domain: 'terminal', dataSeed: 7001, stage: 0, stages: 1 } })).toBe('Quick recipe · terminal');
    expect(recipeRunText({ recipe: { name: 'long', domain: 'web', dataSeed: 1, stage: 1, stages: 2 } })).toBe('Long recipe · web · stage 2 of 2');
    expect(
      recipeRunText({ recipe: { name: 'quick', domain: 'terminal', dataSeed: 7001, stage: 0, stages: 1, tasks: { families: ['write_word'], count: 3976 } } }),
    ).toBe('Quick recipe · terminal · task play of write_word (3,976)');
    expect(recipeRunText({})).toBeNull();
  });
});
