import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../../core/records.ts';
import { taskFamilies } from '../../../envs/tasks/index.ts';
import { newAgentExperiment, type AgentArm } from '../../../train/agent/experiment.ts';
import type { AgentEval } from '../../../train/agent/run.ts';
import { fisherOneSided } from '../../../train/agent/episodes.ts';
import { experimentView } from '../../../jobs/simrlView.ts';
import {
  armCurves,
  armResults,
  curvesXMax,
  defaultSimRlForm,
  followBudgets,
  evalPercent,
  experimentStage,
  formatP,
  HF_POLICY,
  simRlDraft,
  worldChoices,
  endpointWorldKey,
} from './simrl.ts';

const run = {
  id: 'r1',
  name: 'world run',
  checkpoints: { last: { key: 'r1:last:9', step: 9 }, best: { key: 'r1:best:5', step: 5, evalLoss: 1 } },
} as unknown as RunRecord;

describe('Sim RL form', () => {
  it('defaults to a laptop-sized experiment of the lead’s shape and checks into a draft', () => {
    const form = defaultSimRlForm('terminal');
    expect(form).toMatchObject({ preset: 'bench', T: '64', world: 'copy-last', arms: ['imitation', 'real', 'model', 'model-real'] });
    expect(form.families).toEqual(taskFamilies('terminal').slice(0, 1));
    const out = simRlDraft(form, []);
    if (!('draft' in out)) throw new Error(JSON.stringify(out.errors));
    expect(out.draft.world).toEqual({ kind: 'copy-last' });
    expect(out.draft.spec).toMatchObject({
      arms: form.arms,
      world: 'copy-last',
      train: { domain: 'terminal', preset: 'bench', layout: 'compact', T: 64, rlSteps: 20, rlWarmup: 5, rlLr: 3e-4, sftLr: 3e-3, temperature: 1 },
    });
    // The real-valued fields take the forms people type.
    const typed = simRlDraft({ ...form, rlLr: ' 1e-4 ', sftLr: '0.002', temperature: '0.5' }, []);
    if (!('draft' in typed)) throw new Error(JSON.stringify(typed.errors));
    expect(typed.draft.spec.train).toMatchObject({ rlLr: 1e-4, sftLr: 0.002, temperature: 0.5 });
    const warm = simRlDraft({ ...form, rlWarmup: '5' }, []);
    expect('draft' in warm && warm.draft.spec.train.rlWarmup).toBe(5);
    // The library takes it as it is.
    expect(newAgentExperiment(out.draft.spec).arms.map((a) => a.arm)).toEqual(form.arms);
  });

  it('offers each run’s last and best checkpoint as the world model and stores the picked one', () => {
    const worlds = worldChoices([run]);
    expect(worlds.map((w) => w.label)).toEqual(['world run · last (step 9)', 'world run · best (step 5)']);
    const out = simRlDraft({ ...defaultSimRlForm('terminal'), world: 'r1:best:5' }, worlds);
    if (!('draft' in out)) throw new Error(JSON.stringify(out.errors));
    expect(out.draft.world).toEqual({
      kind: 'checkpoint',
      checkpoint: { key: 'r1:best:5', label: 'world run · best (step 5)', runId: 'r1', runName: 'world run', tag: 'best', step: 5 },
    });
    expect(out.draft.spec.world).toBe('world run · best (step 5)');
  });

  it('offers the endpoints set up on this device as the world model, after the checkpoints', () => {
    const endpoints = [{ id: 'ep-1', baseUrl: ' http://127.0.0.1:8000/v1/ ', model: ' world ', contextLength: null, stream: true }];
    const worlds = worldChoices([run], endpoints);
    expect(worlds.map((w) => [w.key, w.label])).toEqual([
      ['r1:last:9', 'world run · last (step 9)'],
      ['r1:best:5', 'world run · best (step 5)'],
      ['endpoint:ep-1', 'world at http://127.0.0.1:8000/v1'],
    ]);
    const out = simRlDraft({ ...defaultSimRlForm('terminal'), world: endpointWorldKey('ep-1') }, worlds);
    if (!('draft' in out)) throw new Error(JSON.stringify(out.errors));
    // No key in the draft: the page keeps it, and each job carries it.
    expect(out.draft.world).toEqual({ kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'world', stream: true, concurrency: 8 } });
    expect(out.draft.spec.world).toBe('world at http://127.0.0.1:8000/v1');
    // An endpoint removed since: an error, not another world.
    const gone = simRlDraft({ ...defaultSimRlForm('terminal'), world: endpointWorldKey('ep-2') }, worlds);
    expect('errors' in gone && gone.errors.world).toMatch(/pick a stored checkpoint, an endpoint or copy-last/);
  });

  it('says what is wrong with each field', () => {
    const bad = {
      ...defaultSimRlForm('terminal'),
      families: [],
      world: 'gone-key',
      rlSteps: '0',
      rlWarmup: 'two',
      group: '1',
      T: 'abc',
      evalTasks: '-3',
      seed: '1.5',
      preset: 'huge',
      sftLr: 'fast',
      rlLr: '1',
      temperature: '0',
    };
    const out = simRlDraft(bad, []);
    if (!('errors' in out)) throw new Error('expected errors');
    expect(out.errors.families).toMatch(/pick at least one/);
    expect(out.errors.world).toMatch(/world-model agents need one/);
    expect(out.errors.rlSteps).toMatch(/whole number ≥ 1, not '0'/);
    expect(out.errors.rlWarmup).toMatch(/^RL warm-up steps: a whole number ≥ 0, not 'two'/);
    expect(out.errors.group).toMatch(/≥ 2/);
    expect(out.errors.T).toMatch(/not 'abc'/);
    expect(out.errors.evalTasks).toMatch(/not '-3'/);
    expect(out.errors.seed).toMatch(/not '1.5'/);
    expect(out.errors.preset).toMatch(/not 'huge'/);
    expect(out.errors.sftLr).toMatch(/^Imitation learning rate: a number such as 0.003, not 'fast'/);
    expect(out.errors.rlLr).toMatch(/^RL learning rate: above 0 and below 1, not 1/);
    expect(out.errors.temperature).toMatch(/^Rollout temperature: above 0 and at most 10, not 0/);
    const blank = simRlDraft({ ...defaultSimRlForm('terminal'), temperature: ' ' }, []);
    expect('errors' in blank && blank.errors.temperature).toMatch(/not ' '/);
    const arms = simRlDraft({ ...defaultSimRlForm('terminal'), arms: ['real', 'model-real'] }, []);
    expect('errors' in arms && arms.errors.arms).toMatch(/pick that one too/);
    const none = simRlDraft({ ...defaultSimRlForm('terminal'), arms: [] }, []);
    expect('errors' in none && none.errors.arms).toMatch(/at least one/);
    const fam = simRlDraft({ ...defaultSimRlForm('terminal'), families: ['no_such'] }, []);
    expect('errors' in fam && fam.errors.families).toMatch(/no_such is not in terminal/);
    const t = simRlDraft({ ...defaultSimRlForm('terminal'), T: '20' }, []);
    expect('errors' in t && t.errors.T).toMatch(/room for a prompt/);
    const every = simRlDraft({ ...defaultSimRlForm('terminal'), rlSteps: '3', evalEvery: '5' }, []);
    expect('errors' in every && every.errors.evalEvery).toMatch(/at most the RL steps \(3\)/);
    // No world model needed: none asked for.
    const real = simRlDraft({ ...defaultSimRlForm('terminal'), arms: ['imitation', 'real'], world: 'gone-key' }, []);
    expect('draft' in real && real.draft.world).toBeNull();
    // The world-model agents are rewarded by a family's simulated check: a family without one is named before anything runs.
    const copyLast = { ...defaultSimRlForm('mcp'), world: 'copy-last' };
    const unprobed = simRlDraft({ ...copyLast, families: ['write_file', 'add_todo'] }, []);
    expect('errors' in unprobed && unprobed.errors.families).toBe(
      "Task families: add_todo has no simulated check, so the world-model agents cannot be rewarded on it; mcp's families with one: write_file, add_event.",
    );
    expect('draft' in simRlDraft(followBudgets(copyLast, { ...copyLast, families: ['write_file', 'add_event'] }), [])).toBe(true);
    expect('draft' in simRlDraft({ ...copyLast, families: ['add_todo'], arms: ['imitation', 'real', 'shuffled'] }, [])).toBe(true);
    const search = simRlDraft({ ...defaultSimRlForm('search'), world: 'copy-last' }, []);
    expect('errors' in search && search.errors.families).toBe(
      'Task families: no family of search has a simulated check yet, so the world-model agents cannot be rewarded; leave them out, or pick another domain.',
    );
  });
});

describe('Sim RL form with a Hugging Face policy', () => {
  const file = (path: string) => ({ path: `llama-chat/${path}`, file: new File(['{}'], path.split('/').pop()!) });
  const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map(file);

  it('draws the folder, its LoRA rank and memory into the draft; blank rank: fine-tuned whole', () => {
    const form = { ...defaultSimRlForm('terminal'), preset: HF_POLICY, hfFiles: files, loraRank: '4', memoryGiB: '2', T: '96', maxNewTokens: '20' };
    const out = simRlDraft(form, []);
    if (!('draft' in out)) throw new Error(JSON.stringify(out.errors));
    expect(out.draft.spec.policy).toEqual({ folder: 'llama-chat', lora: { rank: 4 } });
    expect(out.draft.spec.train).toMatchObject({ T: 96, maxNewTokens: 20 });
    expect(out.draft.folder).toEqual({ name: 'llama-chat', files, memoryGiB: 2 });
    const whole = simRlDraft({ ...form, loraRank: ' ' }, []);
    expect('draft' in whole && whole.draft.spec.policy).toEqual({ folder: 'llama-chat' });
    // A preset's experiment has neither.
    const preset = simRlDraft(defaultSimRlForm('terminal'), []);
    expect('draft' in preset && [preset.draft.spec.policy, preset.draft.folder]).toEqual([undefined, undefined]);
  });

  it('says what is missing or wrong: the folder, the rank, the memory, an action longer than the context allows', () => {
    const out = simRlDraft({ ...defaultSimRlForm('terminal'), preset: HF_POLICY, loraRank: 'r8', memoryGiB: '0', maxNewTokens: '60' }, []);
    if (!('errors' in out)) throw new Error('expected errors');
    expect(out.errors.hfFiles).toMatch(/^Hugging Face folder: pick the model folder/);
    expect(out.errors.loraRank).toMatch(/^LoRA rank: a whole number from 1 to 4096, or blank .*not 'r8'/);
    expect(out.errors.memoryGiB).toMatch(/^GPU memory: a number of GiB above 0, not '0'/);
    expect(out.errors.T).toMatch(/above 68, to leave room for a prompt beside an action of up to 60 tokens/);
  });
});

const ev = (phase: string, step: number, successes: number, n = 8): AgentEval => ({ phase, step, success: successes / n, successes, n, format: 1, turns: 1 });

describe('Sim RL curves and results', () => {
  it('draw each arm’s held-out success by RL step, imitation flat, and give p and the sim-to-real gap', () => {
    const form = defaultSimRlForm('terminal');
    const out = simRlDraft({ ...form, rlSteps: '4', evalEvery: '2' }, []);
    if (!('draft' in out)) throw new Error('draft');
    const s = newAgentExperiment(out.draft.spec);
    s.untrained = ev('untrained', 0, 1);
    s.imitationEval = ev('sft', 60, 2);
    s.imitation = new Uint8Array(8);
    s.arms[0].evals = [ev('imitation', 0, 2)];
    s.arms[0].done = true;
    s.arms[1].evals = [ev('real', 0, 2), ev('real', 2, 4), ev('real', 4, 7)];
    s.arms[1].done = true;
    s.arms[2].evals = [ev('model', 0, 2), ev('model', 2, 3)];
    s.arms[2].gap = { disagree: 3, n: 12 };
    s.cursor = { arm: 2, step: 2, checkpoint: new Uint8Array(8) };
    const v = experimentView(s);
    expect(JSON.stringify(v)).not.toContain('checkpoint');
    expect(v.cursor).toEqual({ arm: 2, step: 2 });
    expect(curvesXMax(v)).toBe(8);
    expect(armCurves(v)).toEqual([
      {
        arm: 'imitation',
        points: [
          [0, 25],
          [4, 25],
        ],
      },
      {
        arm: 'real',
        points: [
          [0, 25],
          [2, 50],
          [4, 87.5],
        ],
      },
      {
        arm: 'model',
        points: [
          [0, 25],
          [2, 37.5],
        ],
      },
      { arm: 'model-real', points: [] },
    ]);
    // Sampled actions: the same evaluations' sampled successes; one stored before evaluations had them is no point.
    s.arms[1].evals = [{ ...ev('real', 0, 2), sampledSuccesses: 1 }, ev('real', 2, 4), { ...ev('real', 4, 7), sampledSuccesses: 6 }];
    const sampled = armCurves(experimentView(s), 'sampled');
    expect(sampled[1]).toEqual({
      arm: 'real',
      points: [
        [0, 12.5],
        [4, 75],
      ],
    });
    expect(sampled[0]).toEqual({ arm: 'imitation', points: [] });
    expect(evalPercent({ ...ev('x', 0, 3), sampledSuccesses: 2 }, 'sampled')).toBe(25);
    expect(evalPercent({ ...ev('x', 0, 3), sampledSuccesses: 2 }, 'greedy')).toBe(37.5);
    expect(evalPercent(ev('x', 0, 3), 'sampled')).toBeNull();
    const r = armResults(v);
    expect(r.map((x) => x.arm)).toEqual(['imitation', 'real', 'model', 'model-real']);
    expect(r[1].pVsUntrained).toBeCloseTo(fisherOneSided(7, 8, 1, 8), 12);
    expect(r[1].pVsImitation).toBeCloseTo(fisherOneSided(7, 8, 2, 8), 12);
    expect(r[2].simToRealGap).toBe(0.25);
    expect(r[2].simulatedEpisodes).toBe(12);
    expect(r[3].final).toBeNull();
    expect(experimentStage(v)).toBe('model: 2 of 4 RL steps stored');
    expect(formatP(null)).toBe('—');
    expect(formatP(0.04321)).toBe('0.043');
    expect(formatP(0.00002)).toBe('2.0e-5');
  });
  it('give each RL agent’s p against the shuffled-reward control when the experiment has it', () => {
    const form = defaultSimRlForm('terminal');
    expect(form.arms).toEqual(['imitation', 'real', 'model', 'model-real']);
    const out = simRlDraft({ ...form, arms: ['imitation', 'real', 'shuffled'], rlSteps: '4', evalEvery: '4' }, []);
    if (!('draft' in out)) throw new Error('draft');
    expect(out.draft.world).toBeNull();
    const s = newAgentExperiment(out.draft.spec);
    s.untrained = { ...ev('untrained', 0, 0, 32), sampledSuccesses: 0 };
    s.imitationEval = { ...ev('sft', 400, 32, 32), sampledSuccesses: 6 };
    s.arms[0].evals = [{ ...s.imitationEval, phase: 'imitation' }];
    s.arms[1].evals = [{ ...ev('real', 4, 30, 32), sampledSuccesses: 20 }];
    s.arms[2].evals = [{ ...ev('shuffled', 4, 12, 32), sampledSuccesses: 3 }];
    const r = armResults(experimentView(s));
    expect(r.map((x) => x.arm)).toEqual(['imitation', 'real', 'shuffled']);
    expect(r[1].pVsShuffled).toBeCloseTo(fisherOneSided(30, 32, 12, 32), 12);
    expect(r[1].pSampledVsShuffled).toBeCloseTo(fisherOneSided(20, 32, 3, 32), 12);
    expect(r[1].pVsShuffled!).toBeLessThan(1e-4);
    expect(r[0].pVsShuffled).toBeNull();
    expect(r[2].pVsShuffled).toBeNull();
    // Without the control, no arm has one.
    const noControl = newAgentExperiment({ ...out.draft.spec, arms: ['imitation', 'real'] });
    noControl.arms[1].evals = [ev('real', 4, 30, 32)];
    expect(armResults(experimentView(noControl)).map((x) => x.pVsShuffled)).toEqual([null, null]);
  });
  it('pair the held-out tasks when the evaluations say which each solved (McNemar), greedy and sampled', () => {
    const out = simRlDraft({ ...defaultSimRlForm('terminal'), arms: ['imitation', 'real', 'shuffled'], rlSteps: '4', evalEvery: '4' }, []);
    if (!('draft' in out)) throw new Error('draft');
    const s = newAgentExperiment(out.draft.spec);
    const bits = (ones: number, n = 16) => '1'.repeat(ones) + '0'.repeat(n - ones);
    const e = (phase: string, k: number, sk: number) => ({ ...ev(phase, 4, k, 16), solved: bits(k), sampledSuccesses: sk, sampledSolved: bits(sk) });
    s.untrained = e('untrained', 0, 0);
    s.imitationEval = e('sft', 5, 1);
    s.arms[0].evals = [{ ...s.imitationEval, phase: 'imitation' }];
    s.arms[1].evals = [e('real', 11, 4)];
    s.arms[2].evals = [e('shuffled', 3, 1)];
    const r = armResults(experimentView(s));
    // 11 of 16 against the imitation's 5, the same 5 kept: 6 gained, none lost, p = 2^-6.
    expect(r[1].pVsImitation).toBeCloseTo(2 ** -6, 12);
    expect(r[1].pVsImitation!).toBeLessThan(fisherOneSided(11, 16, 5, 16));
    expect(r[1].pVsShuffled).toBeCloseTo(2 ** -8, 12);
    expect(r[1].pSampledVsShuffled).toBeCloseTo(2 ** -3, 12);
  });
});

describe('Sim RL form budgets', () => {
  it('budgets follow the domain and families until the person types their own', () => {
    const terminal = defaultSimRlForm('terminal');
    const mcp = followBudgets(terminal, { ...terminal, domain: 'mcp', families: ['write_file'] });
    expect(terminal).toMatchObject({ T: '64', maxNewTokens: '12', sftSteps: '400' });
    expect(mcp).toMatchObject({ T: '96', maxNewTokens: '42', sftSteps: '2000' });
    expect(followBudgets(mcp, { ...mcp, families: ['write_file', 'add_event'] })).toMatchObject({ T: '128', maxNewTokens: '51', sftSteps: '2000' });
    expect(followBudgets(mcp, { ...mcp, families: ['add_event'] })).toMatchObject({ sftSteps: '400' });
    // Typed imitation steps stay too.
    expect(followBudgets(mcp, { ...mcp, sftSteps: '900', families: ['add_event'] })).toMatchObject({ sftSteps: '900' });
    // A typed value stays; the other still follows.
    const typed = { ...mcp, T: '256' };
    expect(followBudgets(typed, { ...typed, families: ['add_event'] })).toMatchObject({ T: '256', maxNewTokens: '51' });
    // Back to the terminal: the lead's shape again.
    expect(followBudgets(mcp, { ...mcp, domain: 'terminal', families: ['write_word'] })).toMatchObject({ T: '64', maxNewTokens: '12', sftSteps: '400' });
    // Other edits leave them alone.
    expect(followBudgets(mcp, { ...mcp, T: '100', rlSteps: '5' })).toMatchObject({ T: '100', maxNewTokens: '42' });
  });

  it('refuses budgets the run’s actions or goals do not fit, with what they need, before an experiment is stored', () => {
    const mcp = { ...defaultSimRlForm('mcp'), arms: ['imitation', 'real'] as AgentArm[] };
    const short = simRlDraft({ ...mcp, maxNewTokens: '12', T: '64' }, []);
    expect('errors' in short && short.errors).toEqual({ maxNewTokens: "Action tokens: at least 42, the tokens of write_file's longest action to imitate." });
    const narrow = simRlDraft({ ...mcp, maxNewTokens: '42', T: '64' }, []);
    expect('errors' in narrow && narrow.errors).toEqual({
      T: "Policy context (T): at least 94, to hold write_file's longest goal (53 tokens with the action's end) beside an action of up to 42 tokens.",
    });
    // The bound is the run's own (budgets.test.ts opens a run either side of it).
    expect('draft' in simRlDraft({ ...mcp, maxNewTokens: '42', T: '94' }, [])).toBe(true);
    expect('errors' in simRlDraft({ ...mcp, maxNewTokens: '42', T: '93' }, [])).toBe(true);
    // Several families: the one that needs most is named.
    const both = simRlDraft({ ...mcp, families: ['write_file', 'add_event'] }, []);
    expect('errors' in both && both.errors).toEqual({ maxNewTokens: "Action tokens: at least 51, the tokens of add_event's longest action to imitate." });
    // A Hugging Face policy's tokenizer is its folder's: the form leaves its budgets to the job.
    const files = ['config.json', 'model.safetensors', 'tokenizer.json'].map((path) => ({ path: `llama-chat/${path}`, file: new File(['{}'], path) }));
    expect('draft' in simRlDraft({ ...mcp, preset: HF_POLICY, hfFiles: files, maxNewTokens: '12', T: '64' }, [])).toBe(true);
  });
});
