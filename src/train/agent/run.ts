// `lwm agent train` on the GPU (docs/method.md §13): an agent policy (our GPT) learns tasks of one
// domain. (1) Imitation: SFT on the reference solvers' episodes of train-split tasks, each action
// a target (policy.ts's layout), plus a final "done" target (an empty action). (2) GSPO on episode
// rewards: G episodes of one task form a group, multi-turn rollouts against the world (here the
// real environment), reward = the task's success check plus a small format term (episodes.ts);
// every move of an episode is one GSPO sequence with its episode's advantage. (3) Every N steps,
// and before and after each stage, greedy episodes on held-out tasks in the real environment.
import { saveCheckpoint, loadCheckpoint } from '../../core/model/checkpoint.ts';
import { presetConfig, type ModelConfig, type PresetName } from '../../core/model/config.ts';
import { lrAt } from '../../core/model/optim.ts';
import { keyedUniform } from '../../core/random.ts';
import type { KnownDomain } from '../../core/schema/types.ts';
import { Tokenizer } from '../../core/tokenizer/index.ts';
import { imitationSamples, movesBatch, policyTokenizer } from './samples.ts';
import { fitPolicyPrompt, listTasks, policyTarget, type PolicySample, type Task } from '../../envs/tasks/index.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { GpuGenerator } from '../../model/generate.ts';
import { initParams } from '../../model/init.ts';
import { GpuTrainer } from '../../model/trainer.ts';
import { UserFacingError } from '../context.ts';
import type { GenerateOptions, LwmBackend } from '../../core/backend.ts';
import {
  episodeAdvantages,
  episodeReward,
  fisherOneSided,
  playEpisodes,
  realCheck,
  realWorld,
  simToRealGap,
  type AgentEpisode,
  type AgentPolicy,
  type AgentWorld,
  type PolicyMove,
} from './episodes.ts';
import { answerKey, simWorld } from './simWorld.ts';

export interface AgentTrainSpec {
  domain: KnownDomain;
  /** Task families of the domain to train and evaluate on. */
  families: string[];
  /** A fresh model of this preset (with `from`: ignored). */
  preset: PresetName;
  vocabSize: number;
  /** Tokens per sequence: prompt and action. */
  T: number;
  /** Train-split tasks whose solver episodes the SFT stage imitates (and RL draws from). */
  trainTasks: number;
  /** Held-out tasks of each evaluation. */
  evalTasks: number;
  sftSteps: number;
  rlSteps: number;
  /** Rows per optimizer step (SFT rows; RL: moves per GSPO update). */
  batch: number;
  /** Episodes per task in a GSPO group. */
  group: number;
  /** Groups (tasks) per RL step. */
  tasksPerStep: number;
  sftLr: number;
  rlLr: number;
  temperature: number;
  /** Most tokens of one action (its end-of-turn token included). */
  maxNewTokens: number;
  maxTurns: number;
  /** Evaluate every N RL steps (and after the last). */
  evalEvery: number;
  seed: number;
  /** Control run: each step's episode rewards are permuted before the advantages (no link between an episode and its reward). */
  shuffleReward?: boolean;
}

export const AGENT_DEFAULTS: Omit<AgentTrainSpec, 'domain' | 'families'> = {
  preset: 'micro',
  // Enough merges that each goal word is one token (measured on terminal/write_word: 512 cut
  // "breeze" into four pieces, 768 keeps it whole); copying one token is what imitation can learn fast.
  vocabSize: 1024,
  T: 256,
  trainTasks: 256,
  evalTasks: 24,
  sftSteps: 60,
  rlSteps: 0,
  batch: 8,
  group: 4,
  tasksPerStep: 2,
  sftLr: 3e-3,
  rlLr: 3e-4,
  temperature: 1,
  maxNewTokens: 20,
  maxTurns: 3,
  evalEvery: 5,
  seed: 0,
};

export interface AgentHost {
  rt: GpuRuntime;
  /**
   * A world model that answers the RL episodes' actions instead of the real environment
   * (--env model); the reward then comes from its simulated check. Evaluation stays real.
   */
  world?: { backend: LwmBackend; options: Omit<GenerateOptions, 'signal'> };
  log(message: string): void;
  /** One metrics line: phase untrained | sft | rl, its step, its values. */
  metric(phase: string, step: number, values: Record<string, number>): void;
}

/** One evaluation: greedy episodes on the held-out tasks, checked in the real environment. */
export interface AgentEval {
  phase: string;
  step: number;
  success: number;
  successes: number;
  n: number;
  format: number;
  turns: number;
}

export interface AgentSummary {
  domain: string;
  families: string[];
  config: ModelConfig;
  tokenizer: number;
  T: number;
  sftSteps: number;
  rlSteps: number;
  evals: AgentEval[];
  untrained: AgentEval;
  final: AgentEval;
  /** Fisher's exact one-sided p that the final held-out success exceeds the untrained one. */
  pFinalVsUntrained: number;
  /** --env model: the share of simulated RL episodes whose simulated success the real check disagrees with. */
  simToRealGap?: number | null;
  simulatedEpisodes?: number;
  checkpoint: Uint8Array;
  seconds: number;
}

/** An SFT batch: B rows, loss on each row's target tokens only. */
function sftBatch(rows: { ids: number[]; promptLength: number }[], B: number, T: number, pad: number) {
  const inputs = new Uint32Array(B * T).fill(pad);
  const targets = new Uint32Array(B * T).fill(pad);
  const weights = new Float32Array(B * T);
  rows.forEach((r, b) => {
    for (let t = 0; t + 1 < r.ids.length && t < T; t++) {
      inputs[b * T + t] = r.ids[t];
      targets[b * T + t] = r.ids[t + 1];
      weights[b * T + t] = t + 1 >= r.promptLength ? 1 : 0;
    }
  });
  return { B, T, inputs, targets, weights };
}

/** The policy's prompt ids for a sample: fitted to T − maxNewTokens (the empty target's end-of-turn token counted). */
function policyPrompt(s: PolicySample, tok: Tokenizer, spec: Pick<AgentTrainSpec, 'T' | 'maxNewTokens'>): number[] {
  return tok.encodeParts(fitPolicyPrompt({ ...s, target: '' }, tok, spec.T - spec.maxNewTokens + 1).prompt);
}

/** The model's policy: prompts fitted to T − maxNewTokens, identical prompts sampled together. */
function gpuPolicy(gen: GpuGenerator, tok: Tokenizer, spec: AgentTrainSpec, sampling: { temperature: number; seed: number }): AgentPolicy {
  const endTurn = tok.special.endTurn;
  const stop = [...tok.observationStops];
  let call = 0;
  return async (samples) => {
    const prompts = samples.map((s) => policyPrompt(s, tok, spec));
    const byPrompt = new Map<string, number[]>();
    prompts.forEach((p, i) => {
      const k = p.join(',');
      byPrompt.set(k, [...(byPrompt.get(k) ?? []), i]);
    });
    const out: PolicyMove[] = new Array(samples.length);
    for (const idx of byPrompt.values()) {
      const prompt = prompts[idx[0]];
      const seed = sampling.seed * 7919 + call++;
      const greedy = sampling.temperature === 0;
      const o = { maxNewTokens: spec.maxNewTokens, sampling: { temperature: sampling.temperature, seed }, stop };
      let responses: number[][];
      if (greedy || idx.length === 1) {
        const r: number[] = [];
        for await (const t of gen.generate(prompt, o)) r.push(t);
        responses = idx.map(() => r);
      } else responses = await gen.generateGroup(prompt, idx.length, { ...o, shared: true });
      idx.forEach((i, k) => {
        const tokens = responses[k];
        const formed = tokens.length > 0 && tokens[tokens.length - 1] === endTurn;
        const body = formed ? tokens.slice(0, -1) : tokens.filter((t) => !stop.includes(t));
        out[i] = { action: formed && body.length === 0 ? '' : tok.decode(body).trim() || (formed ? '' : ' '), formed, tokens, prompt };
      });
    }
    return out;
  };
}

/** Greedy episodes on held-out tasks in the real environment. */
async function evaluate(
  gen: GpuGenerator,
  tok: Tokenizer,
  spec: AgentTrainSpec,
  tasks: readonly Task[],
  phase: string,
  step: number,
  log: (m: string) => void,
): Promise<AgentEval> {
  const worlds = tasks.map((task) => ({ task, world: realWorld(task) }));
  const eps = await playEpisodes(worlds, gpuPolicy(gen, tok, spec, { temperature: 0, seed: 0 }), spec.maxTurns);
  const succ = worlds.map((w) => w.world.check().success);
  const successes = succ.filter(Boolean).length;
  // A few episodes in words, so a log shows what the policy does, not only how often it works.
  for (const [i, e] of eps.slice(0, 3).entries())
    log(`${phase} ${step}: ${e.task.goal} → ${JSON.stringify(e.moves.map((m) => m.action))} ${succ[i] ? 'solved' : 'not solved'}`);
  const mean = (f: (e: AgentEpisode) => number) => eps.reduce((n, e) => n + f(e), 0) / Math.max(1, eps.length);
  return {
    phase,
    step,
    success: successes / tasks.length,
    successes,
    n: tasks.length,
    format: mean((e) => episodeReward(false, e.moves).format),
    turns: mean((e) => e.turns.length),
  };
}

function checkSpec(s: AgentTrainSpec): void {
  const ints: [keyof AgentTrainSpec, number][] = [
    ['trainTasks', 1],
    ['evalTasks', 1],
    ['sftSteps', 0],
    ['rlSteps', 0],
    ['batch', 1],
    ['group', 2],
    ['tasksPerStep', 1],
    ['maxNewTokens', 2],
    ['maxTurns', 1],
    ['evalEvery', 1],
    ['T', 16],
  ];
  for (const [k, min] of ints) {
    const v = s[k] as number;
    if (!Number.isInteger(v) || v < min) throw new UserFacingError(`${k} must be an integer ≥ ${min}; got ${v}`);
  }
  if (!(s.temperature > 0)) throw new UserFacingError(`temperature must be above 0 (GSPO's rollouts are sampled); got ${s.temperature}`);
  if (s.maxNewTokens >= s.T - 8) throw new UserFacingError(`maxNewTokens (${s.maxNewTokens}) leaves no room for a prompt in ${s.T} tokens`);
}

/** Runs imitation, then GSPO, evaluating on held-out tasks; returns the summary with the final checkpoint. */
export async function runAgentTraining(spec: AgentTrainSpec, host: AgentHost, from?: Uint8Array): Promise<AgentSummary> {
  checkSpec(spec);
  const t0 = performance.now();
  const trainTasks = listTasks({ split: 'train', count: spec.trainTasks, domains: [spec.domain], families: spec.families });
  const evalTasks = listTasks({
    split: 'heldout',
    count: Math.ceil(spec.evalTasks / spec.families.length),
    domains: [spec.domain],
    families: spec.families,
  }).slice(0, spec.evalTasks);
  if (host.world)
    for (const f of spec.families) {
      try {
        answerKey(trainTasks.find((t) => t.family === f)!);
      } catch (e) {
        throw new UserFacingError(`--env model: ${(e as Error).message}`);
      }
    }
  const samples = imitationSamples(trainTasks);
  if (!samples.length) throw new UserFacingError('the reference solvers solved none of the train tasks: nothing to imitate');
  let tok: Tokenizer;
  let config: ModelConfig;
  let params: Float32Array;
  if (from) {
    const ck = loadCheckpoint(from, { source: 'the starting policy' });
    const tj = ck.extraMetadata?.tokenizer;
    if (!tj) throw new UserFacingError('the starting policy has no tokenizer in its metadata; it was not written by LWM Studio training');
    tok = Tokenizer.fromJSON(JSON.parse(tj));
    config = ck.config;
    params = ck.params;
  } else {
    tok = policyTokenizer(samples, spec.vocabSize);
    config = presetConfig(spec.preset, { vocabSize: tok.vocabSize, contextLength: spec.T });
    params = initParams(config, spec.seed);
  }
  const T = Math.min(spec.T, config.contextLength);
  const run = { ...spec, T };
  // Training rows end where the policy's prompts end when it acts: the same fit, the same
  // budget (T − maxNewTokens), so a target sits at the positions the action will. Fitting a row
  // to the whole T put every target at the sequence's end, and the learned positions made the
  // end of the sequence, not the prompt, what the policy answered.
  const rows = samples.map((s) => {
    let prompt: number[];
    try {
      prompt = policyPrompt(s, tok, run);
    } catch (e) {
      throw new UserFacingError(`${(e as Error).message} (raise --tokens)`);
    }
    const target = tok.encodeParts(policyTarget(s));
    if (target.length > spec.maxNewTokens)
      throw new UserFacingError(`the action of ${s.source} step ${s.step} takes ${target.length} tokens, more than --max-new-tokens ${spec.maxNewTokens}`);
    return { ids: [...prompt, ...target], promptLength: prompt.length };
  });
  host.log(
    `agent: ${trainTasks.length} train tasks (${samples.length} imitation samples), ${evalTasks.length} held-out tasks; model ${JSON.stringify(config)}; tokenizer ${tok.vocabSize} tokens; ${T} tokens per sequence`,
  );
  const G = spec.group;
  const model = await GpuTrainer.create(host.rt, config, { batch: spec.batch, T, rl: { Lmax: spec.maxNewTokens, temperature: spec.temperature } });
  model.setParams(params);
  const gen = new GpuGenerator(host.rt, config, model.model.params, { maxSequences: Math.max(G, 1), maxLength: T });
  const evals: AgentEval[] = [];
  const evalNow = async (phase: string, step: number) => {
    const ev = await evaluate(gen, tok, run, evalTasks, phase, step, host.log);
    evals.push(ev);
    host.metric(phase, step, { eval_success: ev.success, eval_successes: ev.successes, eval_tasks: ev.n, eval_format: ev.format, eval_turns: ev.turns });
    return ev;
  };
  try {
    const untrained = await evalNow('untrained', 0);
    // (1) Imitation.
    const pad = tok.special.pad;
    const sftSchedule = { maxLr: spec.sftLr, minLr: spec.sftLr / 10, warmupSteps: Math.min(10, spec.sftSteps), totalSteps: spec.sftSteps };
    let order: number[] = [];
    for (let step = 0; step < spec.sftSteps; step++) {
      const batch: typeof rows = [];
      for (let b = 0; b < spec.batch; b++) {
        if (!order.length) order = shuffled(rows.length, `agent-sft:${spec.seed}:${step}`);
        batch.push(rows[order.pop()!]);
      }
      const r = await model.trainStep(sftBatch(batch, spec.batch, T, pad), lrAt(step, sftSchedule), { loss: true });
      host.metric('sft', step + 1, { loss: r.loss ?? NaN });
    }
    if (spec.sftSteps > 0) await evalNow('sft', spec.sftSteps);
    // (2) GSPO on episode rewards.
    const rlSchedule = { maxLr: spec.rlLr, minLr: spec.rlLr / 10, warmupSteps: 0, totalSteps: spec.rlSteps };
    let rlStep = 0;
    const keys = new Map<string, ReturnType<typeof answerKey>>();
    const gapPairs = { disagree: 0, n: 0 };
    for (let step = 0; step < spec.rlSteps; step++) {
      const items: { task: Task; world: AgentWorld; success: () => Promise<boolean> }[] = [];
      for (let g = 0; g < spec.tasksPerStep; g++) {
        const task = trainTasks[Math.floor(keyedUniform(`agent-rl:${step}:${g}`, spec.seed) * trainTasks.length)];
        for (let i = 0; i < G; i++) {
          if (host.world) {
            const w = simWorld(task, host.world.backend, host.world.options, keys.get(task.id) ?? keys.set(task.id, answerKey(task)).get(task.id));
            items.push({ task, world: w, success: async () => (await w.simCheck()).success });
          } else {
            const w = realWorld(task);
            items.push({ task, world: w, success: async () => w.check().success });
          }
        }
      }
      const eps = await playEpisodes(items, gpuPolicy(gen, tok, run, { temperature: spec.temperature, seed: spec.seed * 1009 + step }), spec.maxTurns);
      const wins: boolean[] = [];
      for (const it of items) wins.push(await it.success());
      const parts = eps.map((e, i) => episodeReward(wins[i], e.moves));
      // With a simulated world: the real check of the same actions, for the sim-to-real gap.
      const gap = host.world
        ? simToRealGap(
            eps.map((e, i) => ({
              sim: wins[i],
              real: realCheck(
                e.task,
                e.turns.map((t) => t.action),
              ).success,
            })),
          )
        : null;
      let rewards = parts.map((p) => p.reward);
      if (spec.shuffleReward) {
        const perm = shuffled(rewards.length, `agent-shuffle:${spec.seed}:${step}`);
        rewards = perm.map((j) => rewards[j]);
      }
      // Every move of an episode is one sequence with the episode's advantage (normalised in its group).
      const moves: { prompt: number[]; response: number[]; adv: number }[] = [];
      for (let g = 0; g < spec.tasksPerStep; g++) {
        const adv = episodeAdvantages(rewards.slice(g * G, (g + 1) * G));
        for (let i = 0; i < G; i++)
          for (const m of eps[g * G + i].moves) if (m.tokens.length) moves.push({ prompt: m.prompt, response: m.tokens, adv: adv[i] });
      }
      if (gap) {
        gapPairs.disagree += gap.simOnly + gap.realOnly;
        gapPairs.n += gap.n;
      }
      const stats = await gspoMoves(model, moves, run, pad, lrAt(rlStep, rlSchedule));
      rlStep++;
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      host.metric('rl', step + 1, {
        reward: mean(parts.map((p) => p.reward)),
        success: mean(parts.map((p) => p.success)),
        format: mean(parts.map((p) => p.format)),
        turns: mean(eps.map((e) => e.turns.length)),
        moves: moves.length,
        ...(gap && {
          real_success:
            eps.filter(
              (e) =>
                realCheck(
                  e.task,
                  e.turns.map((t) => t.action),
                ).success,
            ).length / eps.length,
          sim_real_gap: gap.gap,
          sim_only: gap.simOnly,
          real_only: gap.realOnly,
        }),
        ...stats,
      });
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.rlSteps) await evalNow('rl', step + 1);
    }
    const final = evals[evals.length - 1];
    const ck = await model.toCheckpoint({
      extraMetadata: { stage: 'agent', tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify(run) },
    });
    return {
      domain: spec.domain,
      families: spec.families,
      config,
      tokenizer: tok.vocabSize,
      T,
      sftSteps: spec.sftSteps,
      rlSteps: spec.rlSteps,
      evals,
      untrained,
      final,
      pFinalVsUntrained: fisherOneSided(final.successes, final.n, untrained.successes, untrained.n),
      ...(host.world && { simToRealGap: gapPairs.n ? gapPairs.disagree / gapPairs.n : null, simulatedEpisodes: gapPairs.n }),
      // The policy's weights, tokenizer and settings; going on from it starts Adam afresh.
      checkpoint: saveCheckpoint({ ...ck, optimizer: undefined }),
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    gen.dispose();
    model.dispose();
  }
}

/** One RL step's GSPO updates: the moves in batches of `batch` rows (the last filled with zero-advantage copies). */
async function gspoMoves(
  model: GpuTrainer,
  moves: { prompt: number[]; response: number[]; adv: number }[],
  spec: AgentTrainSpec,
  pad: number,
  lr: number,
): Promise<Record<string, number>> {
  const B = spec.batch;
  const chunks: (typeof moves)[] = [];
  for (let i = 0; i < moves.length; i += B) {
    const c = moves.slice(i, i + B);
    while (c.length < B) c.push({ ...c[0], adv: 0 });
    chunks.push(c);
  }
  const batches = chunks.map((c) => movesBatch(c, spec.T, spec.maxNewTokens, pad));
  // π_old of every batch before any update; the first batch's step runs at those weights.
  const olds: (Float32Array | 'current')[] = ['current'];
  for (const b of batches.slice(1)) olds.push(await model.responseLogprobs(b));
  const out = { loss: 0, clip_fraction: 0, mean_ratio: 0, grad_norm: 0, updates: batches.length };
  for (let k = 0; k < batches.length; k++) {
    const s = await model.gspoStep(
      batches[k],
      olds[k],
      chunks[k].map((m) => m.adv),
      lr,
      { gradNorm: true },
    );
    out.loss += -s.objective / batches.length;
    out.clip_fraction += s.clipFraction / batches.length;
    out.mean_ratio += s.meanRatio / batches.length;
    out.grad_norm += (s.gradNorm ?? 0) / batches.length;
  }
  return out;
}

/** 0..n−1 in a keyed random order. */
function shuffled(n: number, key: string): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(keyedUniform(`${key}:${i}`, 0) * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
