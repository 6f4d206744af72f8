// The RL stage (docs/method.md §6–§7): GSPO on the RL pool (one turn per trajectory). Each step draws
// `promptsPerStep` prompts, samples G completions per prompt from a shared-prefix rollout, rewards
// them (rubric judge + rule verifier, or a binary comparison), normalises advantages within each
// group and takes one optimizer step per group. Every spec.evalEvery steps the policy is
// evaluated on held-out turns and the best checkpoint kept by that reward.
import { extractPrediction } from '../../core/judge/extract.ts';
import { groupRewards, rewardOf, type RewardJudges, type SampleReward } from '../../core/judge/reward.ts';
import { judgeInputFor } from '../../core/judge/sample.ts';
import { DIMENSIONS, INVALID_SCORE, type JudgeInput } from '../../core/judge/types.ts';
import { verify } from '../../core/judge/verifier.ts';
import { renderSystem, templateForSample } from '../../core/templates/index.ts';
import { fitPrompt } from '../../core/templates/fit.ts';
import { rlPool, type TurnSample } from '../../core/turns/index.ts';
import { keyedUniform } from '../../core/random.ts';
import type { GpuGenerator } from '../../model/generate.ts';
import type { GspoStats } from '../../gpu/kernels/gspo.ts';
import type { GpuTrainer } from '../../model/trainer.ts';
import { SharedPrefixGspo } from '../../model/sharedPrefix.ts';
import { lrAt } from '../../core/model/optim.ts';
import { encodePrompt } from '../data.ts';
import { UserFacingError } from '../context.ts';
import { advantagesWithFailures, BestTracker, ratioSpread, sequenceRatios } from '../rlMetrics.ts';
import { DomainMeans, domainFigures, domainFiguresLine, type DomainFigures } from '../domainMetrics.ts';
import {
  createRunModel,
  reportCoverage,
  runCheckpointBytes,
  runGenerator,
  type Prepared,
  type ResolvedSpec,
  type TrainHost,
  type TrainResult,
} from './common.ts';
import { judgedEvalSamples } from './rows.ts';

/** One RL run's fixed parts, shared by its steps. */
interface RlRun {
  spec: ResolvedSpec;
  p: Prepared;
  host: TrainHost;
  judges: RewardJudges;
  model: GpuTrainer;
  updates: GroupUpdates;
  gen: GpuGenerator;
  pool: TurnSample[];
  schedule: { maxLr: number; minLr: number; warmupSteps: number; totalSteps: number };
  stop: number[];
}

/** One prompt's group: its G sampled responses and their rewards (null: the judge failed). */
interface RlGroup {
  sample: TurnSample;
  prompt: number[];
  responses: number[][];
  rewards: (SampleReward | null)[];
}

/** Wall-clock milliseconds of one step's phases. */
interface RlTimes {
  rollout: number;
  prefill: number;
  judge: number;
  update: number;
}

export async function runRl(
  spec: ResolvedSpec,
  p: Prepared,
  host: TrainHost,
  judges: RewardJudges,
  bestSoFar?: { step: number; evalLoss: number },
): Promise<TrainResult> {
  const { groupSize: G, promptsPerStep, maxNewTokens, temperature } = spec.rl;
  const pool = rlPool(p.train, spec.seed);
  if (pool.length === 0) throw new UserFacingError('the RL pool is empty: no trajectory has a turn');
  const T = p.T;
  if (maxNewTokens >= T - 8) throw new UserFacingError(`rl.maxNewTokens (${maxNewTokens}) leaves no room for a prompt in ${T} tokens`);
  if (!p.eval.length)
    host.log('rl: no eval-split trajectories: evaluation falls back to training turns, so the best checkpoint is chosen on data it trained on');
  host.log(
    `rl: reward ${spec.rl.reward} judged by ${judges.judge.name}; evaluation on ${spec.rl.evalSamples} held-out turns every ${spec.evalEvery} steps (rubric + verifier reward)`,
  );
  const coverage = reportCoverage(
    host,
    Math.floor(p.start.step / promptsPerStep),
    pool.map((s) => fitPrompt(p.tok, templateForSample(spec.templates, s, spec.seed, spec.templateSet), s, T - maxNewTokens)),
  );
  const rl = { Lmax: maxNewTokens, epsLow: spec.rl.epsLow, epsHigh: spec.rl.epsHigh, temperature };
  // The shared-prefix update passes keep their own activations: the model itself then needs none
  // for G rows. A model the prefix kernel does not serve (see SharedPrefixGspo.supports) takes G rows.
  // The shared-prefix path trains every weight; a LoRA run takes G rows.
  const shared = spec.rl.sharedPrefix && SharedPrefixGspo.supports(p.config) && !p.lora;
  if (spec.rl.sharedPrefix && !shared) host.log('rl: the shared-prefix kernel does not serve this model: update passes process the prompt once per completion');
  const model = await createRunModel(host.rt, p, shared ? { batch: 1, T } : { batch: G, T, rl });
  const updates = shared
    ? sharedUpdates(await SharedPrefixGspo.create(model, { G, promptMax: T - maxNewTokens, ...rl }))
    : rowUpdates(model, T, maxNewTokens, p.tok.special.pad);
  const gen = runGenerator(host.rt, p, model.model, { maxSequences: G, maxLength: T });
  const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps * promptsPerStep };
  const run: RlRun = { spec, p, host, judges, model, updates, gen, pool, schedule, stop: [...p.tok.observationStops] };
  const best = new BestTracker();
  if (bestSoFar) best.best = { step: bestSoFar.step, value: -bestSoFar.evalLoss };
  const generated = { tokens: 0, ms: 0 };
  let byDomain: DomainFigures | undefined;
  try {
    for (let step = Math.floor(model.step / promptsPerStep); step < spec.steps; step++) {
      await host.step();
      const times: RlTimes = { rollout: 0, prefill: 0, judge: 0, update: 0 };
      const groups = await rollouts(run, step, times, generated);
      const tU = performance.now();
      const update = await gspoUpdates(run, groups);
      times.update += performance.now() - tU;
      host.metric(step + 1, rlStepMetrics(run, groups, update, times));
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.steps) {
        const ev = await evaluateRl(gen, p, spec, judges, host);
        host.metric(step + 1, ev);
        byDomain = domainFigures(ev);
        const line = domainFiguresLine(step + 1, byDomain);
        if (line) host.log(line);
        const bytes = await runCheckpointBytes(model, p, spec);
        await host.checkpoint(bytes, { step: step + 1, tag: 'last' });
        // The best checkpoint by the held-out reward; stored under evalLoss as its negative so
        // "lower is better" holds for every stage.
        if (ev.eval_reward !== undefined && best.offer(step + 1, ev.eval_reward))
          await host.checkpoint(bytes, { step: step + 1, tag: 'best', evalLoss: -ev.eval_reward });
      }
    }
    const final = await runCheckpointBytes(model, p, spec);
    const b = best.best && { step: best.best.step, evalLoss: -best.best.value, evalReward: best.best.value };
    return {
      stage: 'rl',
      steps: spec.steps,
      checkpoint: final,
      best: b,
      evalLoss: null,
      unigramLoss: null,
      tokensPerSecond: generated.ms > 0 ? generated.tokens / (generated.ms / 1000) : 0,
      coverage,
      ...(byDomain && Object.keys(byDomain).length ? { evalByDomain: byDomain } : {}),
    };
  } finally {
    gen.dispose();
    updates.dispose();
    model.dispose();
  }
}

/** 1. Rollouts: G samples per prompt over a shared prefix, with the current weights, and their rewards. */
async function rollouts(run: RlRun, step: number, times: RlTimes, generated: { tokens: number; ms: number }): Promise<RlGroup[]> {
  const { spec, p, host, judges, gen, pool } = run;
  const { groupSize: G, promptsPerStep, maxNewTokens, temperature, topK } = spec.rl;
  const rewardsOf = async (predictions: string[], sample: TurnSample, context: string, key: string): Promise<(SampleReward | null)[]> => {
    if (host.reward) return predictions.map((x) => ({ pass: false, ...host.reward!(x, sample, 'train') }));
    return groupRewards(spec.rl.reward, judges, judgeTurn(sample, context), predictions, { mix: spec.rl.rewardMix, key, seed: spec.seed });
  };
  const groups: RlGroup[] = [];
  for (let g = 0; g < promptsPerStep; g++) {
    const sample = pool[Math.floor(keyedUniform(`rl:${step}:${g}`, spec.seed) * pool.length)];
    const template = templateForSample(spec.templates, sample, spec.seed, spec.templateSet);
    const prompt = encodePrompt(p.tok, sample, template, p.T - maxNewTokens);
    const timing = { prefillMs: 0, decodeMs: 0 };
    const t0 = performance.now();
    const responses = await gen.generateGroup(
      prompt,
      G,
      { maxNewTokens, sampling: { temperature, topK, seed: spec.seed * 7919 + step * 131 + g }, stop: run.stop, shared: true },
      timing,
    );
    times.rollout += performance.now() - t0;
    times.prefill += timing.prefillMs;
    generated.tokens += responses.reduce((n, r) => n + r.length, 0);
    generated.ms += performance.now() - t0;
    const t1 = performance.now();
    const context = renderSystem(template, sample);
    const rewards = await rewardsOf(
      responses.map((r) => extractPrediction(template.targetOpen + p.tok.decode(r))),
      sample,
      context,
      `rl:${step}:${g}`,
    );
    times.judge += performance.now() - t1;
    groups.push({ sample, prompt, responses, rewards });
  }
  return groups;
}

/** What the update passes of one step report: means over its groups, and every response's sequence ratio. */
interface RlUpdate {
  objective: number;
  clipFraction: number;
  meanRatio: number;
  gradNorm: number;
  ratios: number[];
}

/**
 * The GSPO passes over one group (prompt + G responses): π's log-probs of the responses and one
 * optimizer step. Two layouts give the same numbers: G full prompt + response rows, or the
 * prompt processed once with its K/V shared by the G responses (docs/method.md §10, the default).
 */
export interface GroupUpdates {
  /** Response tokens trained on, per response. */
  lengths(prompt: number[], responses: number[][]): number[];
  logprobs(prompt: number[], responses: number[][]): Promise<Float32Array>;
  step(
    prompt: number[],
    responses: number[][],
    old: Float32Array | 'current',
    advantages: ArrayLike<number>,
    lr: number,
  ): Promise<GspoStats & { gradNorm?: number }>;
  dispose(): void;
}

/** The unshared layout: the group as G rows of T tokens (rlBatch) through the model's own GSPO path. */
export function rowUpdates(model: GpuTrainer, T: number, Lmax: number, pad: number): GroupUpdates {
  const batch = (prompt: number[], responses: number[][]) => rlBatch(prompt, responses, T, Lmax, pad);
  return {
    lengths: (prompt, responses) => batch(prompt, responses).spans.map((sp) => sp.len),
    logprobs: (prompt, responses) => model.responseLogprobs(batch(prompt, responses)),
    step: (prompt, responses, old, adv, lr) => model.gspoStep(batch(prompt, responses), old, adv, lr, { gradNorm: true }),
    dispose: () => {},
  };
}

/** The shared-prefix layout (src/model/sharedPrefix.ts). */
export function sharedUpdates(shared: SharedPrefixGspo): GroupUpdates {
  return {
    lengths: (prompt, responses) => shared.lengths({ prompt, responses }),
    logprobs: (prompt, responses) => shared.responseLogprobs({ prompt, responses }),
    step: (prompt, responses, old, adv, lr) => shared.gspoStep({ prompt, responses }, old, adv, lr, { gradNorm: true }),
    dispose: () => shared.dispose(),
  };
}

/** 2–3. π_old for every group, then one GSPO step per group. */
async function gspoUpdates(run: RlRun, groups: RlGroup[]): Promise<RlUpdate> {
  const { model, updates, spec, schedule } = run;
  const { maxNewTokens } = spec.rl;
  // 2. π_old: log-probs of every group's responses before any update of this rollout batch.
  // The first group's step runs at those weights, so its own forward gives π_old: no extra pass.
  const olds: (Float32Array | 'current')[] = ['current'];
  for (const grp of groups.slice(1)) olds.push(await updates.logprobs(grp.prompt, grp.responses));
  // 3. One GSPO step per group. The first group's ratios are 1 (π_θ = π_old); later groups
  //    see a policy that has moved, and their s_i are read before the step that uses them.
  const stats: RlUpdate = { objective: 0, clipFraction: 0, meanRatio: 0, gradNorm: 0, ratios: [] };
  for (let g = 0; g < groups.length; g++) {
    const { prompt, responses } = groups[g];
    const lengths = updates.lengths(prompt, responses);
    if (g === 0) stats.ratios.push(...lengths.map(() => 1));
    else stats.ratios.push(...sequenceRatios(await updates.logprobs(prompt, responses), olds[g] as Float32Array, lengths, maxNewTokens));
    const adv = advantagesWithFailures(groups[g].rewards.map((r) => r?.reward ?? null));
    const lr = lrAt(model.step, schedule);
    const s = await updates.step(prompt, responses, olds[g], adv, lr);
    stats.objective += s.objective / groups.length;
    stats.clipFraction += s.clipFraction / groups.length;
    stats.meanRatio += s.meanRatio / groups.length;
    stats.gradNorm += (s.gradNorm ?? 0) / groups.length;
  }
  return stats;
}

/** The metrics of one RL step: rewards and their parts, judge dimensions, ratios and where the time went. */
function rlStepMetrics(run: RlRun, groups: RlGroup[], stats: RlUpdate, times: RlTimes): Record<string, number> {
  const { spec, host, p } = run;
  const G = spec.rl.groupSize;
  const all = groups.flatMap((g) => g.rewards).filter((r): r is SampleReward => r !== null);
  const failed = groups.reduce((n, g) => n + g.rewards.filter((r) => r === null).length, 0);
  const mean = (f: (r: SampleReward) => number | undefined) => (all.length ? all.reduce((n, r) => n + (f(r) ?? 0), 0) / all.length : NaN);
  const dims: Record<string, number> = {};
  if (all.length && all.every((r) => r.scores)) for (const d of DIMENSIONS) dims[`judge_${d}`] = mean((r) => r.scores![d]);
  const parts: Record<string, number> =
    spec.rl.reward === 'rubric' && !host.reward ? { reward_judge: mean((r) => r.judge), reward_verifier: mean((r) => r.verifier) } : {};
  const total = times.rollout + times.judge + times.update;
  const responseTokens = groups.reduce((n, g) => n + g.responses.reduce((m, r) => m + r.length, 0), 0);
  const spread = ratioSpread(stats.ratios);
  return {
    reward: mean((r) => r.reward),
    ...parts,
    ...(host.reward ? {} : { verifier_pass: mean((r) => (r.pass ? 1 : 0)) }),
    reward_failed: failed,
    ...dims,
    clip_fraction: stats.clipFraction,
    mean_ratio: stats.meanRatio,
    ratio_std: spread.std,
    ratio_min: spread.min,
    ratio_max: spread.max,
    loss: -stats.objective,
    grad_norm: stats.gradNorm,
    response_length: responseTokens / (groups.length * G),
    tokens_per_s: (responseTokens + groups.length * G * p.T) / (total / 1000),
    share_rollout: (times.rollout - times.prefill) / total,
    share_prefill: times.prefill / total,
    share_judge: times.judge / total,
    share_update: times.update / total,
  };
}

/** What a judge sees of a turn, before the prediction is known. */
function judgeTurn(sample: TurnSample, context: string): Omit<JudgeInput, 'prediction'> {
  const { prediction: _, ...turn } = judgeInputFor(sample, context, '');
  void _;
  return turn;
}

/**
 * Held-out evaluation of the policy (docs/method.md §7 figures): one greedy prediction for each of
 * `evalSamples` eval-split turns (one per trajectory, one domain after another, so 8 samples
 * cover up to 8 domains), judged on the five dimensions and checked by the verifier. Whatever
 * reward trains the policy, `eval_reward` is the rubric + verifier reward, so runs with different
 * rewards are compared on one scale; it picks the best checkpoint. eval_reward, eval_judge_mean
 * and eval_verifier_pass also come per domain (`<metric>/<domain>`, domainMetrics.ts).
 */
async function evaluateRl(gen: GpuGenerator, p: Prepared, spec: ResolvedSpec, judges: RewardJudges, host: TrainHost): Promise<Record<string, number>> {
  const pool = judgedEvalSamples(p, spec.seed, spec.rl.evalSamples);
  const perDomain = new DomainMeans();
  const maxNew = spec.rl.maxNewTokens;
  const sums: Record<string, number> = {};
  let failed = 0;
  // Each figure is a mean over the samples that have it: an endpoint judge's missing dimension
  // (INVALID_SCORE, 0) is left out of that dimension's mean, as the benchmark scorer does.
  const counts: Record<string, number> = {};
  const add = (k: string, v: number) => {
    sums[k] = (sums[k] ?? 0) + v;
    counts[k] = (counts[k] ?? 0) + 1;
  };
  for (const sample of pool) {
    const template = templateForSample(spec.evalTemplates, sample, spec.seed, spec.templateSet);
    const prompt = encodePrompt(p.tok, sample, template, p.T - maxNew);
    const out: number[] = [];
    for await (const t of gen.generate(prompt, { maxNewTokens: maxNew, sampling: { temperature: 0 }, stop: [...p.tok.observationStops] })) out.push(t);
    const prediction = extractPrediction(template.targetOpen + p.tok.decode(out));
    if (host.reward) {
      const r = host.reward(prediction, sample, 'eval').reward;
      add('eval_reward', r);
      perDomain.add(sample.domain, 'eval_reward', r);
      continue;
    }
    const input = judgeInputFor(sample, renderSystem(template, sample), prediction);
    const v = await judges.judge.judge(input);
    const pass = verify(input).pass;
    const parts = rewardOf(v, pass, spec.rl.rewardMix);
    if (!parts || v.failed) {
      failed++;
      continue;
    }
    add('eval_reward', parts.reward);
    add('eval_verifier_pass', pass ? 1 : 0);
    add('eval_judge_mean', v.total);
    for (const d of DIMENSIONS) if (v.scores[d] !== INVALID_SCORE) add(`eval_judge_${d}`, v.scores[d]);
    perDomain.add(sample.domain, 'eval_reward', parts.reward);
    perDomain.add(sample.domain, 'eval_judge_mean', v.total);
    perDomain.add(sample.domain, 'eval_verifier_pass', pass ? 1 : 0);
  }
  const out: Record<string, number> = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / counts[k]]));
  out.eval_failed = failed;
  return { ...out, ...perDomain.metrics() };
}

/** Prompt + response sequences of one group as a model batch, with the response spans. */
export function rlBatch(prompt: number[], responses: number[][], T: number, Lmax: number, pad: number) {
  const B = responses.length;
  const inputs = new Uint32Array(B * T).fill(pad);
  const targets = new Uint32Array(B * T).fill(pad);
  const spans = responses.map((r, i) => {
    const seq = [...prompt, ...r.slice(0, Lmax)].slice(0, T + 1);
    for (let t = 0; t + 1 < seq.length && t < T; t++) {
      inputs[i * T + t] = seq[t];
      targets[i * T + t] = seq[t + 1];
    }
    return { start: prompt.length - 1, len: Math.min(r.length, Lmax, T + 1 - prompt.length) };
  });
  return { B, T, inputs, targets, spans };
}
