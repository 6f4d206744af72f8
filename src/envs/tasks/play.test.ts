import { describe, expect, it } from 'vitest';
import { validateTrajectory } from '../../core/schema/validate.ts';
import { checkSpanTiling } from '../spans.ts';
import { playableFamilies, SOLVER_SHARE, taskPlayTrajectories, taskPlayTrajectory } from './play.ts';
import { makeTaskEnv, seedSplit, taskById, taskFamily } from './registry.ts';

describe('task-play trajectories', () => {
  const families = ['write_word', 'make_dir'];
  const ts = taskPlayTrajectories('terminal', families, 200, 3);

  it('are valid trajectories of the one schema whose spans tile every observation', () => {
    for (const t of ts) {
      expect(validateTrajectory(t), t.id).toEqual([]);
      for (const turn of t.turns) expect(checkSpanTiling(turn.observation, turn.metadata!.spans as never), t.id).toBeNull();
    }
    expect(ts[7].id).toBe('task-terminal-3-00007');
  });

  it('are the same for the same arguments and differ for another seed', () => {
    expect(taskPlayTrajectory('terminal', families, 3, 7)).toEqual(ts[7]);
    expect(JSON.stringify(taskPlayTrajectory('terminal', families, 4, 7))).not.toBe(JSON.stringify(ts[7]));
  });

  it("replay a train-split task's attempt in the real environment, end with the family's probe, and say whether it succeeded", () => {
    for (const t of ts) {
      const task = taskById(String(t.metadata!.task));
      expect(seedSplit(task.seed)).toBe('train');
      expect(families).toContain(task.family);
      expect(t.system_prompt).toEqual(makeTaskEnv(task).reset().system_prompt);
      const last = t.turns[t.turns.length - 1];
      expect(last.action).toBe(taskFamily('terminal', task.family).probe!(task.params));
      // The probe trains at full weight whatever its mask category; the attempt's turns by their category.
      expect(last.metadata!.loss_weight_override).toBe(1);
      for (const turn of t.turns.slice(0, -1)) expect(turn.metadata!.loss_weight_override).toBeUndefined();
      // The same actions in a fresh environment give the same observations and the same verdict.
      const env = makeTaskEnv(task);
      env.reset();
      for (const turn of t.turns) expect(env.step(turn.action).observation).toBe(turn.observation);
      expect(env.check().success).toBe(t.metadata!.success);
      expect(t.metadata!.success).toBe(t.metadata!.attempt === 'solver');
    }
  });

  it('play the solver at the share asked for, the same tasks otherwise', () => {
    const quarter = taskPlayTrajectories('terminal', ['write_word'], 200, 7, 0.25);
    const half = taskPlayTrajectories('terminal', ['write_word'], 200, 7);
    const solver = quarter.filter((t) => t.metadata!.attempt === 'solver').length;
    // Binomial(200, 1/4): about 4.9 standard deviations either side.
    expect(Math.abs(solver - 50)).toBeLessThan(30);
    expect(solver).toBeLessThan(half.filter((t) => t.metadata!.attempt === 'solver').length);
    expect(quarter.map((t) => t.metadata!.task)).toEqual(half.map((t) => t.metadata!.task));
    for (const t of quarter) expect(t.metadata!.success).toBe(t.metadata!.attempt === 'solver');
    expect(taskPlayTrajectories('terminal', ['write_word'], 5, 7, 0).some((t) => t.metadata!.attempt === 'solver')).toBe(false);
    for (const bad of [-0.1, 1.5, Number.NaN])
      expect(() => taskPlayTrajectories('terminal', ['write_word'], 1, 7, bad)).toThrow(`the solver's share of task play must be between 0 and 1; got ${bad}`);
  });

  it('play the solver about half the time, and each near miss and doing nothing in the rest', () => {
    const attempts = new Map<string, number>();
    for (const t of ts) attempts.set(String(t.metadata!.attempt), (attempts.get(String(t.metadata!.attempt)) ?? 0) + 1);
    const solver = attempts.get('solver') ?? 0;
    // Binomial(200, 1/2): 4.5 standard deviations either side.
    expect(Math.abs(solver - 200 * SOLVER_SHARE)).toBeLessThan(32);
    expect([...attempts.keys()].sort()).toEqual(['near miss 1', 'near miss 2', 'near miss 3', 'near miss 4', 'near miss 5', 'nothing', 'solver']);
    const wordTasks = ts.filter((t) => String(t.metadata!.task).includes('/write_word/'));
    expect(wordTasks.length).toBeGreaterThan(60);
    expect(new Set(wordTasks.map((t) => t.turns[0].action)).size).toBeGreaterThan(30);
    // A solved write_word task's probe prints the word; no near miss's does.
    for (const t of wordTasks) {
      const word = String(taskById(String(t.metadata!.task)).params.word);
      const shown = t.turns[t.turns.length - 1].observation.split('\n')[0];
      expect(shown === word, t.id).toBe(t.metadata!.success);
    }
  });

  it('refuse a family without a probe, saying which have one', () => {
    expect(() => playableFamilies('terminal', ['record_env'])).toThrow(/'terminal\/record_env' has no probe.*write_word, make_dir/);
    expect(() => taskPlayTrajectory('terminal', ['no_such'], 1, 0)).toThrow(/no task family 'no_such'/);
    expect(playableFamilies('terminal')).toEqual(['write_word', 'make_dir']);
  });
});
