import { describe, expect, it } from 'vitest';
import { listTasks, makeTaskEnv, solveTask, type PolicySample, type Task } from '../../envs/tasks/index.ts';
import {
  episodeAdvantages,
  episodeReward,
  evalP,
  fisherOneSided,
  pairedOneSided,
  FORMAT_WEIGHT,
  playEpisodes,
  realCheck,
  realWorld,
  simToRealGap,
  type AgentPolicy,
  type AgentWorld,
  type PolicyMove,
} from './episodes.ts';
import { imitationSamples, movesBatch } from './samples.ts';
import { rlSchedule, stepAdvantages } from './run.ts';
import { lrAt } from '../../core/model/optim.ts';

const tasks = listTasks({ split: 'train', count: 6, domains: ['terminal'], families: ['write_word', 'copy_file'] });
const move = (action: string, formed = true): PolicyMove => ({ action, formed, tokens: [], prompt: [] });

/** A scripted policy: each task's reference actions in order, then done; every sample it saw is kept. */
function scripted(seen: PolicySample[], extra: (t: Task) => string[] = () => []): AgentPolicy {
  return async (samples) =>
    samples.map((s) => {
      seen.push(s);
      const task = tasks.find((t) => t.id === s.source)!;
      const plan = [...solveTask(task).turns.map((t) => t.action), ...extra(task)];
      return move(plan[s.step] ?? '');
    });
}

describe('episodes of a policy against the real environment', () => {
  it('play the policy turn by turn, show it the history, end on done, and the check sees the result', async () => {
    const seen: PolicySample[] = [];
    const worlds = tasks.map((task) => ({ task, world: realWorld(task) }));
    const eps = await playEpisodes(worlds, scripted(seen), 10);
    eps.forEach((e, i) => {
      const solved = solveTask(tasks[i]);
      expect(e.turns).toEqual(solved.turns);
      // The reference actions, then one "done" move that the world never sees.
      expect(e.moves.map((m) => m.action)).toEqual([...solved.turns.map((t) => t.action), '']);
      expect(worlds[i].world.check().success).toBe(true);
      expect(
        realCheck(
          tasks[i],
          e.turns.map((t) => t.action),
        ).success,
      ).toBe(true);
    });
    // Each sample holds the task's goal and exactly the turns before it.
    for (const s of seen) {
      const e = eps.find((x) => x.task.id === s.source)!;
      expect(s.task).toContain(e.task.goal);
      expect(s.history).toEqual(e.turns.slice(0, s.step).map(({ action, observation }) => ({ action, observation })));
    }
  });

  it('stop at the turn limit and after a malformed action, and a wrong action fails the check', async () => {
    const t = tasks.find((x) => x.family === 'write_word')!;
    const chatty: AgentPolicy = async (ss) => ss.map((s) => move(`echo ${s.step} > ${String(t.params.file)}`));
    const [long] = await playEpisodes([{ task: t, world: realWorld(t) }], chatty, 3);
    expect(long.turns.length).toBe(3);
    expect(
      realCheck(
        t,
        long.turns.map((x) => x.action),
      ).success,
    ).toBe(false);
    const cut: AgentPolicy = async (ss) => ss.map(() => move(`echo ${String(t.params.word)} > ${String(t.params.file)}`, false));
    const w = realWorld(t);
    const [short] = await playEpisodes([{ task: t, world: w }], cut, 3);
    expect(short.turns.length).toBe(1);
    // The cut-off action still ran: the check reads the world as it is.
    expect(w.check().success).toBe(true);
    const [none] = await playEpisodes([{ task: t, world: realWorld(t) }], chatty, 0);
    expect(none.moves).toEqual([]);
  });

  it('take the world as given: a simulated world answers whatever it likes', async () => {
    const t = tasks[0];
    const answers: string[] = [];
    const sim: AgentWorld = {
      reset: () => realWorld(t).reset(),
      step: (a) => {
        answers.push(a);
        return { observation: `sim:${a}`, ok: true };
      },
    };
    const seen: PolicySample[] = [];
    const [e] = await playEpisodes(
      [{ task: t, world: sim }],
      scripted(seen, () => ['ls']),
      5,
    );
    expect(e.turns.map((x) => x.observation)).toEqual(answers.map((a) => `sim:${a}`));
    expect(seen[seen.length - 1].history.at(-1)?.observation).toBe('sim:ls');
  });
});

describe('the episode reward and GSPO group advantages', () => {
  it('give success 1 and a small format term that never outranks success', () => {
    expect(episodeReward(true, [{ formed: true }, { formed: true }])).toEqual({ reward: 1 + FORMAT_WEIGHT, success: 1, format: 1 });
    expect(episodeReward(false, [{ formed: true }, { formed: false }])).toEqual({ reward: FORMAT_WEIGHT / 2, success: 0, format: 0.5 });
    expect(episodeReward(true, [{ formed: false }]).reward).toBeGreaterThan(episodeReward(false, [{ formed: true }]).reward);
    expect(episodeReward(false, []).reward).toBe(0);
  });
  it('normalise within the group: zero mean, unit spread, the better episode ahead, nothing for a group of equals', () => {
    const adv = Array.from(episodeAdvantages([1.1, 0, 0.1, 0]));
    expect(adv.reduce((a, b) => a + b, 0)).toBeCloseTo(0, 9);
    const sd = Math.sqrt(adv.reduce((a, b) => a + b * b, 0) / adv.length);
    expect(sd).toBeCloseTo(1, 3);
    expect(adv[0]).toBeGreaterThan(adv[2]);
    expect(adv[2]).toBeGreaterThan(adv[1]);
    expect(Array.from(episodeAdvantages([0.1, 0.1, 0.1]))).toEqual([0, 0, 0]);
  });
  it('of a step: each group of G normalised on its own; the control permutes the rewards across the step first, the same way for the same key', () => {
    const rewards = [1.1, 0.1, 0.1, 0.1, 0, 0, 0, 1.1];
    const plain = Array.from(stepAdvantages(rewards, 4, null));
    expect(plain).toEqual([...episodeAdvantages(rewards.slice(0, 4)), ...episodeAdvantages(rewards.slice(4))]);
    // The rewarded episodes (0 and 7) are ahead of the rest of their groups.
    expect(plain[0]).toBeGreaterThan(Math.max(...plain.slice(1, 4)));
    expect(plain[7]).toBeGreaterThan(Math.max(...plain.slice(4, 7)));
    // Shuffled: one key gives one order; over many keys, an episode's advantage no longer follows its own reward.
    const key = 'agent-shuffle:0:3';
    expect(Array.from(stepAdvantages(rewards, 4, key))).toEqual(Array.from(stepAdvantages(rewards, 4, key)));
    let firstAhead = 0;
    const keys = 200;
    for (let k = 0; k < keys; k++) {
      const adv = stepAdvantages(rewards, 4, `agent-shuffle:0:${k}`);
      if (adv[0] > 0) firstAhead++;
      // Every group's advantages still sum to zero (rewards normalised within the group).
      expect(adv.slice(0, 4).reduce((a, b) => a + b, 0)).toBeCloseTo(0, 9);
    }
    // Unshuffled, episode 0 (reward 1.1) is always ahead of its group's mean (above). Shuffled, it is
    // ahead in 5/14 of all permutations (counted over the 8! orders of these rewards); a binomial of
    // 200 at p = 5/14 (mean 71) lies in (40, 105) with probability above 1 − 2e-6.
    expect(firstAhead).toBeGreaterThan(40);
    expect(firstAhead).toBeLessThan(105);
  });
});

describe('the sim-to-real gap', () => {
  it('is the share of simulated episodes the real check disagrees with, by direction', () => {
    const pairs = [
      { sim: true, real: true },
      { sim: true, real: false },
      { sim: true, real: false },
      { sim: false, real: true },
      { sim: false, real: false },
    ];
    expect(simToRealGap(pairs)).toEqual({ gap: 3 / 5, simOnly: 2, realOnly: 1, n: 5 });
    expect(simToRealGap([])).toEqual({ gap: 0, simOnly: 0, realOnly: 0, n: 0 });
  });
});

describe("Fisher's exact test, one-sided", () => {
  it('matches the hypergeometric tail computed by hand', () => {
    // 7/20 against 0/20: only the observed table is as extreme, C(20,7)·C(20,0)/C(40,7).
    expect(fisherOneSided(7, 20, 0, 20)).toBeCloseTo(77520 / 18643560, 10);
    // 3/4 against 1/4: P(X ≥ 3) = (C(4,3)C(4,1) + C(4,4)C(4,0)) / C(8,4) = 17/70.
    expect(fisherOneSided(3, 4, 1, 4)).toBeCloseTo(17 / 70, 10);
    expect(fisherOneSided(0, 10, 0, 10)).toBeCloseTo(1, 10);
    expect(fisherOneSided(2, 10, 5, 10)).toBeGreaterThan(0.9);
  });
});

describe("McNemar's exact test, one-sided, and which test an evaluation pair gets", () => {
  it('counts only the tasks the two evaluations disagree on', () => {
    // 7 gained, 1 lost (and 2 both solved, 2 both failed): P(X ≥ 7), X ~ binomial(8, ½) = (8 + 1)/256.
    const before = '000000011100';
    const after = '111111101100';
    expect(pairedOneSided(after, before)).toEqual({ p: expect.closeTo(9 / 256, 12), gained: 7, lost: 1 });
    // The reverse direction: P(X ≥ 1) = 1 − 1/256.
    expect(pairedOneSided(before, after).p).toBeCloseTo(255 / 256, 12);
    // No disagreement: nothing to show.
    expect(pairedOneSided('1100', '1100')).toEqual({ p: 1, gained: 0, lost: 0 });
    expect(() => pairedOneSided('101', '10')).toThrow(/of one length, got 3 and 2/);
    expect(() => pairedOneSided('1x', '10')).toThrow(/strings of 0 and 1/);
  });
  it('pairs evaluations that have per-task outcomes; counts alone (stored before them) get Fisher', () => {
    // 30 against 23 of 64 where the same 23 are kept and 7 gained: paired p = 2^-7; Fisher on the counts is far weaker.
    const before = '1'.repeat(23) + '0'.repeat(41);
    const after = '1'.repeat(30) + '0'.repeat(34);
    expect(evalP({ successes: 30, n: 64, solved: after }, { successes: 23, n: 64, solved: before })).toBeCloseTo(2 ** -7, 12);
    expect(evalP({ successes: 30, n: 64 }, { successes: 23, n: 64, solved: before })).toBeCloseTo(fisherOneSided(30, 64, 23, 64), 12);
    expect(fisherOneSided(30, 64, 23, 64)).toBeGreaterThan(0.1);
  });
});

describe('imitation samples and GSPO rows', () => {
  it('are the solver episodes, each ending with a done sample (an empty action after the whole history)', () => {
    const ss = imitationSamples(tasks);
    for (const t of tasks) {
      const e = solveTask(t);
      const mine = ss.filter((s) => s.source === t.id);
      expect(mine.map((s) => s.target)).toEqual([...e.turns.map((x) => x.action), '']);
      expect(mine.at(-1)!.history.length).toBe(e.turns.length);
    }
  });
  it('with a solver share below 1, are a demonstrator that errs: the rest of the tasks played by one of their near misses, refused actions too', () => {
    const many = listTasks({ split: 'train', count: 400, domains: ['terminal'], families: ['write_word'] });
    const half = imitationSamples(many, 0.5);
    // Every task gives one episode (its action, then done), the same on every call.
    expect(half.length).toBe(2 * many.length);
    expect(imitationSamples(many, 0.5)).toEqual(half);
    let solver = 0;
    const kinds = new Set<string>();
    for (const t of many) {
      const [first, done] = half.filter((s) => s.source === t.id);
      expect(done.target).toBe('');
      const world = makeTaskEnv(t);
      world.reset();
      world.step(first.target);
      if (first.target === solveTask(t).turns[0].action) solver++;
      else {
        // A near miss fails the task; which one it was, as a shape of its action.
        expect(world.check().success, first.target).toBe(false);
        kinds.add(
          first.target
            .replace(/\S+\.txt/, 'F')
            .replace(t.params.word as string, 'W')
            .replace(/^echo (?!W\b)\w+/, 'echo V'),
        );
      }
    }
    // About half the solver's (binomial(400, ½): 200 ± 10), and every near miss of the family.
    expect(solver).toBeGreaterThan(160);
    expect(solver).toBeLessThan(240);
    // Another word, the word printed, cut short, another file, the file only touched.
    expect([...kinds].sort()).toEqual(['echo V > F', 'echo W', 'echo W >', 'echo W > F', 'touch F']);
    expect(imitationSamples(many, 1)).toEqual(imitationSamples(many));
    expect(() => imitationSamples(many, 1.5)).toThrow(/between 0 and 1; got 1.5/);
  });
  it('lay out each move after its own prompt, the response span where the action is', () => {
    const b = movesBatch(
      [
        { prompt: [5, 6, 7], response: [8, 9] },
        { prompt: [1, 2], response: [3, 4, 5, 6] },
      ],
      6,
      3,
      0,
    );
    expect(Array.from(b.inputs)).toEqual([5, 6, 7, 8, 0, 0, 1, 2, 3, 4, 0, 0]);
    expect(Array.from(b.targets)).toEqual([6, 7, 8, 9, 0, 0, 2, 3, 4, 5, 0, 0]);
    expect(b.spans).toEqual([
      { start: 2, len: 2 },
      { start: 1, len: 3 },
    ]);
  });
  it('RL learning rate: a warm-up of N steps rises linearly to rlLr; none (a run stored before the setting) starts at rlLr; both end at a tenth', () => {
    const lrs = (spec: { rlLr: number; rlWarmup?: number }, total: number) => Array.from({ length: total }, (_, s) => lrAt(s, rlSchedule(spec, total)));
    const warm = lrs({ rlLr: 3e-4, rlWarmup: 4 }, 20);
    expect(warm.slice(0, 4).map((x) => x / 3e-4)).toEqual([0.25, 0.5, 0.75, 1].map((x) => expect.closeTo(x, 12)));
    expect(warm[4]).toBeCloseTo(3e-4, 12);
    expect(warm[19]).toBeLessThan(warm[4]);
    expect(lrs({ rlLr: 3e-4 }, 20)[0]).toBeCloseTo(3e-4, 12);
    expect(lrs({ rlLr: 3e-4, rlWarmup: 0 }, 20)).toEqual(lrs({ rlLr: 3e-4 }, 20));
    expect(lrAt(20, rlSchedule({ rlLr: 3e-4, rlWarmup: 4 }, 20))).toBeCloseTo(3e-5, 12);
    // A warm-up longer than the stage is cut to it: the last step still reaches rlLr.
    expect(lrs({ rlLr: 3e-4, rlWarmup: 50 }, 5)[4]).toBeCloseTo(3e-4, 12);
  });
});
