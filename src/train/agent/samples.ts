// The agent policy's training rows on the CPU (docs/method.md §13): the imitation samples of the
// reference solvers' episodes, the policy's tokenizer, and GSPO rows of moves as a model batch.
import { Rng } from '../../core/random.ts';
import { SPECIAL_TOKENS, Tokenizer, trainBpe } from '../../core/tokenizer/index.ts';
import {
  episodeSamples,
  fitPolicyPrompt,
  makeTaskEnv,
  policyText,
  runEpisode,
  solveTask,
  type PolicyLayout,
  type PolicySample,
  type Task,
} from '../../envs/tasks/index.ts';

/**
 * Episodes of the train tasks as policy samples, each episode ending with a "done" sample (empty
 * action). By default every episode is the reference solver's. With `solverShare` below 1 the
 * demonstrator errs as task play does: each task (by its id) is played by the solver with that
 * chance, else by one of its family's near misses, so the imitated policy makes those mistakes
 * too and RL has something to take out (docs/method.md §13).
 */
export function imitationSamples(tasks: readonly Task[], solverShare = 1): PolicySample[] {
  if (!(solverShare >= 0 && solverShare <= 1)) throw new Error(`the solver's share of the imitation episodes must be between 0 and 1; got ${solverShare}`);
  const out: PolicySample[] = [];
  for (const t of tasks) {
    const misses = solverShare < 1 ? makeTaskEnv(t).nearMisses() : [];
    const rng = new Rng(`imitation:${t.id}`);
    const miss = misses.length && !rng.chance(solverShare) ? misses[rng.int(0, misses.length - 1)] : null;
    const e = miss ? runEpisode(t, miss) : solveTask(t);
    if (!miss && !e.verdict.success) continue;
    // A near miss's actions are the targets even where the environment refused them (one cut short).
    out.push(...episodeSamples(e, { onlyAccepted: !miss }));
    out.push({
      source: t.id,
      domain: t.domain,
      step: e.turns.length,
      task: e.system_prompt.task_description,
      goal: t.goal,
      actionSpace: e.system_prompt.action_space,
      initialState: e.system_prompt.initial_state,
      history: e.turns.map(({ action, observation }) => ({ action, observation })),
      target: '',
    });
  }
  return out;
}

/** The policy's tokenizer: BPE trained on the imitation samples' prompts and targets as laid out. */
export function policyTokenizer(samples: readonly PolicySample[], vocabSize: number, layout: PolicyLayout = 'full'): Tokenizer {
  const big = 1 << 20;
  const corpus = samples.map((s) => {
    const fit = fitPolicyPrompt(s, new Tokenizer([]), big, layout);
    return policyText([...fit.prompt, ...fit.target]);
  });
  return trainBpe([...corpus, ...Object.values(SPECIAL_TOKENS)], { vocabSize });
}

/** GSPO rows (each its own prompt and response) as a model batch with response spans. */
export function movesBatch(rows: readonly { prompt: number[]; response: number[] }[], T: number, Lmax: number, pad: number) {
  const B = rows.length;
  const inputs = new Uint32Array(B * T).fill(pad);
  const targets = new Uint32Array(B * T).fill(pad);
  const spans = rows.map(({ prompt, response }, i) => {
    const seq = [...prompt, ...response.slice(0, Lmax)].slice(0, T + 1);
    for (let t = 0; t + 1 < seq.length && t < T; t++) {
      inputs[i * T + t] = seq[t];
      targets[i * T + t] = seq[t + 1];
    }
    return { start: prompt.length - 1, len: Math.min(response.length, Lmax, T + 1 - prompt.length) };
  });
  return { B, T, inputs, targets, spans };
}
