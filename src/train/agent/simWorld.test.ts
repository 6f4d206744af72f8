import { describe, expect, it } from 'vitest';
import { isTurnRequest, type LwmBackend } from '../../core/backend.ts';
import { listTasks, makeTaskEnv, taskById, type Task } from '../../envs/tasks/index.ts';
import { playEpisodes, realCheck, simToRealGap, type AgentPolicy } from './episodes.ts';
import { answerKey, probeAgreement, sameObservation, simWorld } from './simWorld.ts';

const tasks = listTasks({ split: 'heldout', count: 4, domains: ['terminal'], families: ['write_word', 'make_dir'] });

/** A world model that is always right: it replays the history in the real environment of the task its prompt names. */
function faithful(): LwmBackend & { seen: string[] } {
  const seen: string[] = [];
  return {
    name: 'faithful',
    seen,
    async *generate(r) {
      if (!isTurnRequest(r)) throw new Error('turn requests only');
      const desc = typeof r.sample.systemPrompt === 'string' ? r.sample.systemPrompt : r.sample.systemPrompt.task_description;
      seen.push(desc);
      const task = tasks.find((t) => desc.includes(t.goal))!;
      const env = makeTaskEnv(task);
      env.reset();
      for (const h of r.sample.history) env.step(h.action);
      yield env.step(r.sample.action).observation;
    },
  };
}

/** A world model that shows every goal as reached: its probe answers are the answer key. */
function flatterer(): LwmBackend {
  return {
    name: 'flatterer',
    async *generate(r) {
      if (!isTurnRequest(r)) throw new Error('turn requests only');
      // Probes name files from home (`cat note.txt`), so several tasks share one: the goal in the prompt tells which.
      const desc = typeof r.sample.systemPrompt === 'string' ? r.sample.systemPrompt : r.sample.systemPrompt.task_description;
      const task = tasks.find((t) => answerKey(t).probe === r.sample.action && desc.includes(t.goal));
      yield task ? answerKey(task).expected : 'ok';
    },
  };
}

/** Solves the even tasks, writes the wrong word (or no directory) on the odd ones, then says done. */
const half: AgentPolicy = async (ss) =>
  ss.map((s) => {
    const i = tasks.findIndex((t) => t.id === s.source);
    const t = tasks[i];
    const right = t.family === 'write_word' ? `echo ${String(t.params.word)} > ${String(t.params.file)}` : `mkdir ${String(t.params.dir)}`;
    const action = s.step > 0 ? '' : i % 2 === 0 ? right : 'echo nothing';
    return { action, formed: true, tokens: [], prompt: [] };
  });

async function simulate(backend: LwmBackend, list: Task[]) {
  const worlds = list.map((task) => ({ task, world: simWorld(task, backend, { maxTokens: 64, temperature: 0 }) }));
  const eps = await playEpisodes(worlds, half, 3);
  const sim = await Promise.all(worlds.map((w) => w.world.simCheck()));
  return eps.map((e, i) => ({
    sim: sim[i].success,
    real: realCheck(
      e.task,
      e.turns.map((t) => t.action),
    ).success,
  }));
}

describe('a world model as the world', () => {
  it('answers with the task system prompt and the history, and a faithful model rewards what the real check does', async () => {
    const b = faithful();
    const pairs = await simulate(b, tasks);
    expect(pairs.map((p) => p.real)).toEqual(tasks.map((_, i) => i % 2 === 0));
    expect(simToRealGap(pairs)).toMatchObject({ gap: 0, n: tasks.length });
    for (const t of tasks) expect(b.seen.some((d) => d.includes(t.goal))).toBe(true);
  });
  it('measures the gap of a model that shows every goal as reached', async () => {
    const pairs = await simulate(flatterer(), tasks);
    expect(pairs.every((p) => p.sim)).toBe(true);
    expect(simToRealGap(pairs)).toEqual({ gap: 0.5, simOnly: tasks.length / 2, realOnly: 0, n: tasks.length });
  });
  it("keys each task's probe to the real environment after the reference solver", () => {
    const t = tasks.find((x) => x.family === 'write_word')!;
    const key = answerKey(t);
    expect(key.probe).toBe(`cat ${String(t.params.file)}`);
    expect(key.expected.split('\n')[0]).toBe(String(t.params.word));
    expect(sameObservation('a \nb\n\n', 'a\nb')).toBe(true);
    expect(sameObservation('a', 'b')).toBe(false);
    expect(() => answerKey(listTasks({ split: 'train', count: 1, domains: ['terminal'], families: ['record_env'] })[0])).toThrow(
      /no simulated check for terminal\/record_env/,
    );
  });

  it("measures a world model's probe against the real check on the solver's, each near miss's and no attempt", async () => {
    const options = { maxTokens: 64, temperature: 0 };
    const right = await probeAgreement(tasks, faithful(), options);
    expect(right.map((r) => r.attempt)).toEqual(['solver', 'near miss 1', 'near miss 2', 'near miss 3', 'near miss 4', 'near miss 5', 'nothing']);
    for (const r of right) {
      expect(r.agree, r.attempt).toBe(r.episodes);
      expect(r.example).toBeUndefined();
      expect(r.simSuccesses).toBe(r.realSuccesses);
    }
    expect(right[0]).toMatchObject({ episodes: tasks.length, realSuccesses: tasks.length });
    // Five near misses for write_word, two for make_dir: the third to fifth rows have only the write_word tasks.
    for (const k of [3, 4, 5]) expect(right[k].episodes).toBe(tasks.filter((t) => t.family === 'write_word').length);
    // A world model that shows every goal as reached is right on the solver's episodes only.
    const flat = await probeAgreement(tasks, flatterer(), options);
    expect(flat[0]).toMatchObject({ attempt: 'solver', agree: tasks.length, simSuccesses: tasks.length });
    for (const r of flat.slice(1)) {
      expect(r, r.attempt).toMatchObject({ agree: 0, realSuccesses: 0, simSuccesses: r.episodes });
      expect(r.example!.observation).toBe(answerKey(taskById(r.example!.task)).expected);
    }
  });
});
