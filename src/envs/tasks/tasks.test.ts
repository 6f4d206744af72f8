import { describe, expect, it } from 'vitest';
import { DOMAINS as ALL_DOMAINS, type KnownDomain } from '../../core/schema/types.ts';
import { Rng } from '../../core/random.ts';
import { PlanAgent } from '../agent.ts';
import { ENV_DOMAINS } from '../registry.ts';
import {
  listTasks,
  makeTask,
  makeTaskEnv,
  runEpisode,
  SEED_RANGES,
  seedSplit,
  solveTask,
  splitSeed,
  TASK_DOMAINS,
  taskById,
  taskFamilies,
  taskFamily,
  type Task,
} from './index.ts';
import { answerMatches } from './search.ts';

const DOMAINS = Object.keys(TASK_DOMAINS) as KnownDomain[];
const FAMILIES = DOMAINS.flatMap((domain) => taskFamilies(domain).map((family) => [domain, family] as const));
const TRAIN = 24;
const HELDOUT = 8;

/** Replayed elsewhere, one task's actions may solve at most this share of a family's other tasks. */
const MAX_REPLAY = 0.2;
/**
 * Families whose answer is an id the agent looks up (the todo to complete): a remembered id
 * hits the right item when the world numbers it the same, which three or more open items keep
 * to about a third.
 */
const MAX_REPLAY_BY_ID = 0.4;

const tasksOf = (domain: KnownDomain, family: string) => [
  ...listTasks({ split: 'train', count: TRAIN, domains: [domain], families: [family] }),
  ...listTasks({ split: 'heldout', count: HELDOUT, domains: [domain], families: [family] }),
];

describe.each(FAMILIES)('%s tasks of family %s', (domain, family) => {
  const tasks = tasksOf(domain, family);
  const episodes = tasks.map(solveTask);

  it('are solved by the reference solver in the real environment', () => {
    for (const e of episodes) expect(e.verdict, `${e.task.id}: ${e.task.goal}`).toMatchObject({ success: true });
    const level = taskFamily(domain, family).level;
    // Level 1 families take one correct action: the easiest thing a policy can learn.
    if (level === 1) for (const e of episodes) expect(e.turns.length).toBe(1);
    else for (const e of episodes) expect(e.turns.length).toBeGreaterThan(1);
  });

  it('fail when the agent does nothing or makes a plausible mistake', () => {
    for (const t of tasks) {
      expect(runEpisode(t, () => new PlanAgent([])).verdict.success, t.id).toBe(false);
      const misses = makeTaskEnv(t).nearMisses();
      expect(misses.length).toBeGreaterThan(0);
      for (const miss of misses) {
        const e = runEpisode(t, miss);
        expect(e.verdict.success, `${t.id} after ${JSON.stringify(e.turns.map((x) => x.action))}`).toBe(false);
        expect(e.verdict.reason.length).toBeGreaterThan(0);
      }
    }
  });

  it('differ by seed: one task solved by rote solves only a small share of the others', () => {
    const train = tasks.slice(0, TRAIN);
    expect(new Set(train.map((t) => t.goal)).size).toBeGreaterThanOrEqual(TRAIN / 4);
    let worst = 0;
    for (const e of episodes.slice(0, TRAIN)) {
      const actions = e.turns.map((x) => x.action);
      const solved = train.filter((t) => t !== e.task && runEpisode(t, () => new PlanAgent(actions)).verdict.success).length;
      worst = Math.max(worst, solved / (TRAIN - 1));
    }
    expect(worst).toBeLessThanOrEqual(family === 'complete_todo' ? MAX_REPLAY_BY_ID : MAX_REPLAY);
  });

  it('are the same on every call for the same seed, and differ for another', () => {
    const t = tasks[3];
    expect(makeTask(domain, family, t.seed)).toEqual(t);
    expect(taskById(t.id)).toEqual(t);
    expect(JSON.parse(JSON.stringify(t))).toEqual(t);
    expect(solveTask(t)).toEqual(episodes[3]);
    expect(makeTaskEnv(t).reset()).toEqual(makeTaskEnv(t).reset());
    expect(makeTask(domain, family, t.seed + 1)).not.toEqual(t);
  });

  it("put the goal in the environment's task description and nowhere else changed", () => {
    const t = tasks[0];
    const r = makeTaskEnv(t).reset();
    const inner = ENV_DOMAINS[domain].create().reset(t.envSeed);
    expect(r.system_prompt.task_description).toContain(`Its goal: ${t.goal}.`);
    expect({ ...r.system_prompt, task_description: '' }).toEqual({ ...inner.system_prompt, task_description: '' });
  });

  it('check without throwing after random agents, on an unstarted environment and with missing parameters', () => {
    const f = taskFamily(domain, family);
    const def = TASK_DOMAINS[domain]!;
    for (const t of tasks.slice(0, 12)) {
      const env = makeTaskEnv(t);
      env.reset();
      const agent = ENV_DOMAINS[domain].agent(env.inner, new Rng(`fuzz:${t.id}`), 'random');
      let last = null;
      for (let i = 0; i < 30; i++) {
        const a = agent.next(last);
        if (a === null) break;
        last = env.step(a);
      }
      expect(typeof env.check().success).toBe('boolean');
      const fresh = () => {
        const e = def.create();
        e.reset(t.envSeed);
        return e;
      };
      expect(f.check(def.create(), t.params, fresh).success).toBe(false);
      expect(f.check(env.inner, {}, fresh).success).toBe(false);
    }
    expect(makeTaskEnv(tasks[0]).check()).toEqual({ success: false, reason: 'the episode has not started' });
  });
});

const PROBED = FAMILIES.filter(([d, f]) => taskFamily(d, f).probe);

/** A task's episode by `agent` in the real environment (after the actions `before`), then its family's probe: the probe's answer and the check's verdict after it. */
function probeAfter(t: Task, agent: Parameters<typeof runEpisode>[1], before: string[] = []) {
  const env = makeTaskEnv(t);
  env.reset();
  for (const a of before) env.step(a);
  const a = agent(env);
  for (let last = null, action = a.next(null); action !== null; action = a.next(last)) last = env.step(action);
  const answer = env.step(taskFamily(t.domain, t.family).probe!(t.params)).observation;
  return { answer, verdict: env.check() };
}

describe.each(PROBED)('%s tasks of family %s, with a probe,', (domain, family) => {
  it("show by their probe's observation the solver's episode apart from a mistake's and from doing nothing", () => {
    const seen = (t: Task, agent: Parameters<typeof runEpisode>[1]) => probeAfter(t, agent).answer;
    for (const t of tasksOf(domain, family)) {
      const solved = seen(t, (env) => env.solver());
      for (const miss of [() => new PlanAgent([]), ...makeTaskEnv(t).nearMisses()]) expect(seen(t, miss), t.id).not.toBe(solved);
    }
  });

  it("answer, after the solver's episode, with nothing a simulation could not know: no word of the world's own hidden state", () => {
    // In a simulated episode everything the agent reads comes from the world model, so the answer
    // key (the real answer after the solver's episode) must follow from what the simulation is
    // given: the goal, the system prompt, the actions, the probe, and the family's fixed answer
    // form (the words every task's key has). A number one past a shown one is the next id of a
    // counted store. A word of the world's hidden files or items can be matched only by chance.
    const probe = taskFamily(domain, family).probe!;
    const words = (s: string): string[] => s.match(/[A-Za-z0-9]+/g) ?? [];
    const keys = tasksOf(domain, family).map((t) => {
      const env = makeTaskEnv(t);
      const sp = env.reset().system_prompt;
      const actions = solveTask(t).turns.map((x) => x.action);
      for (const a of actions) env.step(a);
      const expected = env.step(probe(t.params)).observation;
      return { t, expected, shown: new Set(words([t.goal, ...Object.values(sp), probe(t.params), ...actions].join('\n'))) };
    });
    const fixed = new Set(words(keys[0].expected).filter((w) => keys.every((k) => words(k.expected).includes(w))));
    for (const k of keys) {
      const unseen = words(k.expected).filter((w) => !k.shown.has(w) && !fixed.has(w) && !(/^\d+$/.test(w) && k.shown.has(String(Number(w) - 1))));
      expect(unseen, `${k.t.id}: ${JSON.stringify(k.expected)}`).toEqual([]);
    }
  });

  it('leave the goal as it was, and answer by the state, not by the path to it (an earlier probe does not move the answer)', () => {
    const probe = taskFamily(domain, family).probe!;
    for (const t of tasksOf(domain, family).slice(0, 12)) {
      const play = (first: string[]) => probeAfter(t, (env) => env.solver(), first);
      const plain = play([]);
      // After the probe the goal is still reached (cd moves the shell, not the directory).
      expect(plain.verdict.success, t.id).toBe(true);
      // The probe played before the episode as well (one more action, its clock one tick on): the same answer after it.
      expect(play([probe(t.params)]).answer, t.id).toBe(plain.answer);
      // Nothing done: the probe alone never reaches the goal.
      const idle = makeTaskEnv(t);
      idle.reset();
      idle.step(probe(t.params));
      expect(idle.check().success, t.id).toBe(false);
    }
  });
});

describe('probes', () => {
  it("exist for the terminal's new file and directory, the tool server's new file and event, and the repository's new function", () => {
    expect(PROBED.map(([d, f]) => `${d}/${f}`).sort()).toEqual([
      'mcp/add_event',
      'mcp/write_file',
      'swe/write_function',
      'terminal/make_dir',
      'terminal/write_word',
    ]);
  });

  it("answer a tool server's probe with the goal's item as the solver left it", () => {
    const [t] = listTasks({ split: 'heldout', count: 1, domains: ['mcp'], families: ['write_file'] });
    const answer = JSON.parse(probeAfter(t, (env) => env.solver()).answer);
    expect(answer.id).toBe(99);
    expect(JSON.parse(answer.result.content[0].text)).toEqual({ path: t.params.path, content: t.params.text });
  });
});

describe("the tool server's write_file near misses", () => {
  it("write the goal's file into every other folder across tasks, send the right call cut short, which writes nothing, and write another file of the goal's folder", () => {
    const pairs = new Set<string>();
    for (const t of listTasks({ split: 'train', count: 200, domains: ['mcp'], families: ['write_file'] })) {
      const [folder, name] = String(t.params.path).split('/');
      const misses = makeTaskEnv(t).nearMisses();
      // Near miss i's one call: the folder and name it writes, its text, and the real check.
      const write = (i: number) => {
        const e = runEpisode(t, misses[i]);
        const args = JSON.parse(e.turns[0].action).params.arguments;
        const [f, n] = args.path.split('/');
        return { folder: f, name: n, content: args.content, success: e.verdict.success };
      };
      const elsewhere = write(3);
      expect(elsewhere.name, t.id).toBe(name);
      expect(elsewhere.folder, t.id).not.toBe(folder);
      expect(elsewhere.content).toBe(t.params.text);
      pairs.add(`${folder}>${elsewhere.folder}`);
      const cut = runEpisode(t, misses[4]);
      expect(() => JSON.parse(cut.turns[0].action), t.id).toThrow();
      expect(JSON.parse(cut.turns[0].observation).error.code, t.id).toBe(-32700);
      expect(cut.verdict.success).toBe(false);
      const sibling = write(5);
      expect(sibling.folder, t.id).toBe(folder);
      expect(sibling.name, t.id).not.toBe(name);
      expect(sibling.content).toBe(t.params.text);
      expect(sibling.success, t.id).toBe(false);
    }
    expect([...pairs].sort()).toEqual(['docs>notes', 'docs>plans', 'notes>docs', 'notes>plans', 'plans>docs', 'plans>notes']);
  });
});

describe('train and held-out seeds', () => {
  it('exist for every built-in environment', () => {
    expect([...DOMAINS].sort()).toEqual([...ALL_DOMAINS].sort());
  });

  it('never overlap, and each task says its split', () => {
    expect(SEED_RANGES.train.end).toBeLessThanOrEqual(SEED_RANGES.heldout.start);
    const train = listTasks({ split: 'train', count: 5 });
    const held = listTasks({ split: 'heldout', count: 5 });
    const trainSeeds = new Set(train.map((t) => t.seed));
    for (const t of held) {
      expect(trainSeeds.has(t.seed)).toBe(false);
      expect(t.split).toBe('heldout');
      expect(seedSplit(t.seed)).toBe('heldout');
    }
    for (const t of train) expect(t.split).toBe('train');
    expect(new Set([...train, ...held].map((t) => t.id)).size).toBe(train.length + held.length);
    expect(seedSplit(SEED_RANGES.train.end - 1)).toBe('train');
    expect(seedSplit(SEED_RANGES.heldout.start)).toBe('heldout');
  });

  it('list every family of every domain, interleaved, from an offset', () => {
    const all = listTasks({ split: 'train', count: 2 });
    expect(all.length).toBe(2 * FAMILIES.length);
    expect(all.slice(0, FAMILIES.length).map((t) => `${t.domain}/${t.family}`)).toEqual(FAMILIES.map(([d, f]) => `${d}/${f}`));
    expect(listTasks({ split: 'train', count: 1, offset: 1 })).toEqual(all.slice(FAMILIES.length));
    expect(listTasks({ split: 'heldout', count: 1, domains: ['terminal'], families: ['write_word'] })[0].seed).toBe(SEED_RANGES.heldout.start);
  });

  it('refuse seeds, indices, domains and families that do not exist, saying which', () => {
    expect(() => seedSplit(-1)).toThrow(/task seed -1/);
    expect(() => seedSplit(1.5)).toThrow(/task seed 1.5/);
    expect(() => seedSplit(2 ** 31)).toThrow(/not a whole number/);
    expect(() => splitSeed('heldout', 2 ** 31)).toThrow(/outside the heldout range/);
    expect(() => makeTask('nowhere' as KnownDomain, 'tap', 1)).toThrow(/no tasks for domain 'nowhere'; domains with tasks: terminal, /);
    expect(() => makeTask('terminal', 'nope', 1)).toThrow(/no task family 'nope' in domain 'terminal'; families: write_word/);
    expect(() => listTasks({ split: 'train', count: 1, families: ['nope'] })).toThrow(/no task family 'nope'/);
    expect(() => taskById('terminal/write_word')).toThrow(/not domain\/family\/seed/);
    expect(() => makeTaskEnv(tasksOf('terminal', 'write_word')[0]).step('ls')).toThrow(/reset\(\) the environment/);
  });
});

describe('answers', () => {
  it('match up to case, quotes, a full stop, thousands separators and a unit', () => {
    expect(answerMatches(' "Marvelton". ', 'marvelton')).toBe(true);
    expect(answerMatches('45,600', '45600')).toBe(true);
    expect(answerMatches('412', '412 km')).toBe(true);
    expect(answerMatches('412 km', '412 km')).toBe(true);
    expect(answerMatches('41', '412 km')).toBe(false);
    expect(answerMatches('', 'Oslo')).toBe(false);
  });
  it('count only the last one submitted', () => {
    const t = listTasks({ split: 'train', count: 1, domains: ['search'], families: ['lookup'] })[0] as Task;
    const right = `answer(${JSON.stringify(String(t.params.answer))})`;
    expect(runEpisode(t, () => new PlanAgent([right, 'answer("something else")'])).verdict.success).toBe(false);
    expect(runEpisode(t, () => new PlanAgent(['answer("something else")', right])).verdict.success).toBe(true);
  });
});
