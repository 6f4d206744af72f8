// The three training stages of SPEC §5–§7 on the GPU model, as one job that runs the same in a
// Web Worker (the app) and in Node (`lwm train`):
//
//   CPT  next-token prediction on packed text: each domain's knowledge text (manual pages, tool
//        schemas, corpus documents) plus whole trajectories rendered with the CPT template.
//   SFT  turn samples rendered with templates drawn from the SFT distribution; loss on the target
//        observation only, each token weighted by its turn's mask ratio (SPEC §4).
//   RL   GSPO on the RL pool (one turn per trajectory): G samples per prompt from a shared-prefix
//        rollout, rewards from the local judge and the rule verifier (0.9 / 0.1), advantages
//        normalised within each group, one optimiser step per group so later groups of a rollout
//        batch see a policy that has moved (the ratio matters).
//
// Every stage: warmup + cosine learning rate, evaluation every N steps on the eval split (loss,
// and the local judge on a few generated predictions), the best checkpoint kept, a checkpoint
// that resumes the same loss curve.
import { knowledgeText } from '../core/envs/index.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { DEFAULT_REWARD_MIX, reward as mixReward, type RewardMix } from '../core/judge/reward.ts';
import { localJudge, rubricJudge } from '../core/judge/rubric.ts';
import { judgeInputFor } from '../core/judge/sample.ts';
import { DIMENSIONS, type Scores } from '../core/judge/types.ts';
import { verify } from '../core/judge/verifier.ts';
import { categorizeDataset, type TrajectoryMask } from '../core/masking/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../core/schema/types.ts';
import { BUILTIN_TEMPLATES, checkDistribution, DEFAULT_STAGE_TEMPLATES, renderSystem, renderTrajectory, templateForSample, type PromptTemplate, type TemplateDistribution } from '../core/templates/index.ts';
import { Tokenizer, trainBpe } from '../core/tokenizer/index.ts';
import { expandTurns, rlPool, splitByTrajectory, type TurnSample } from '../core/turns/index.ts';
import { keyedUniform } from '../core/turns/rng.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from '../model/checkpoint.ts';
import { presetConfig, type ModelConfig, type PresetName } from '../model/config.ts';
import { GpuGenerator } from '../model/generate.ts';
import { GpuGpt } from '../model/gpt.ts';
import { initParams } from '../model/init.ts';
import { lrAt } from '../reference/gpt.ts';
import { groupAdvantages } from '../reference/gspo.ts';
import { BatchSampler, coverageMetrics, encodePrompt, encodeSftSample, encodeSftSamples, makeBatch, packCorpus, type EncodedRow } from './data.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { UserFacingError } from './host.ts';

export type Stage = 'cpt' | 'sft' | 'rl';

export interface RlSettings {
  /** Samples per prompt (G). Default 4. */
  groupSize?: number;
  /** Prompts (groups) per rollout batch; each is one optimiser step. Default 2. */
  promptsPerStep?: number;
  /** Longest response. Default 32. */
  maxNewTokens?: number;
  /** Sampling temperature of the rollout. Default 1. */
  temperature?: number;
  topK?: number;
  epsLow?: number;
  epsHigh?: number;
  rewardMix?: RewardMix;
}

export interface TrainSpec {
  kind: 'train';
  stage: Stage;
  preset: PresetName;
  /** Tokenizer vocabulary when a new one is trained (default: the preset's vocabSize, at least 384). */
  vocabSize?: number;
  /** Steps of this stage (RL: rollout batches). */
  steps: number;
  /** Sequences per step (SFT/CPT). Default 8. */
  batch?: number;
  /** Tokens per sequence. Default: the model's context length. */
  T?: number;
  /** Learning rate: peak, floor, warmup steps. Defaults by stage. */
  lr?: { peak?: number; min?: number; warmup?: number };
  /** Evaluate every N steps (0: only at the end). Default steps / 4. */
  evalEvery?: number;
  /** Eval batches averaged for eval_loss. Default 2. */
  evalBatches?: number;
  /** Eval samples generated and judged by the local judge at each evaluation. Default 2. */
  evalJudgeSamples?: number;
  /** Share of trajectories held out for evaluation. Default 0.1. */
  evalFraction?: number;
  /** Only these domains. */
  domains?: string[];
  seed?: number;
  /** Template distribution of this stage (default DEFAULT_STAGE_TEMPLATES[stage]). */
  templates?: TemplateDistribution;
  /** Template versions beyond the built-in ones that the distribution may name (the Prompts view's). */
  templateSet?: Record<string, PromptTemplate>;
  rl?: RlSettings;
}

/** What the pipeline needs from wherever it runs (worker or Node). */
export interface TrainHost {
  rt: GpuRuntime;
  /** Between steps: waits while paused; throws to stop. */
  step(): Promise<void>;
  metric(step: number, values: Record<string, number>): void;
  log(message: string): void;
  /** A checkpoint to keep: 'last' at every checkpoint point, 'best' when eval improves. */
  checkpoint(bytes: Uint8Array, info: { step: number; tag: 'last' | 'best'; evalLoss?: number }): Promise<void> | void;
  /** Replaces the judge+verifier reward (tests: a toy reward). */
  reward?: (prediction: string, sample: TurnSample) => { reward: number; judge?: number; verifier?: number };
}

export interface TrainResult {
  stage: Stage;
  steps: number;
  /** The final state (weights, Adam, tokenizer), as safetensors bytes. */
  checkpoint: Uint8Array;
  best: { step: number; evalLoss: number } | null;
  evalLoss: number | null;
  unigramLoss: number | null;
  tokensPerSecond: number;
  /** How much of each sample the model saw (SFT rows, RL prompts): coverage_system, coverage_turns, ... (coverageMetrics). */
  coverage?: Record<string, number>;
}

const STAGE_LR: Record<Stage, { peak: number; min: number; warmup: number }> = {
  cpt: { peak: 3e-3, min: 3e-4, warmup: 10 },
  sft: { peak: 2e-3, min: 2e-4, warmup: 10 },
  rl: { peak: 1e-4, min: 1e-5, warmup: 0 },
};

/** Settings with defaults applied, so logs and checkpoints record what actually ran. */
export function resolveSpec(spec: TrainSpec) {
  if (!['cpt', 'sft', 'rl'].includes(spec.stage)) throw new UserFacingError(`stage must be cpt, sft or rl; got '${spec.stage}'`);
  if (!Number.isInteger(spec.steps) || spec.steps < 1) throw new UserFacingError(`steps must be a positive integer; got ${spec.steps}`);
  const lr = { ...STAGE_LR[spec.stage], ...spec.lr };
  const evalEvery = spec.evalEvery ?? Math.max(1, Math.floor(spec.steps / 4));
  const rl = { groupSize: 4, promptsPerStep: 2, maxNewTokens: 32, temperature: 1, topK: 0, rewardMix: DEFAULT_REWARD_MIX, ...spec.rl };
  if (spec.stage === 'rl' && (!Number.isInteger(rl.groupSize) || rl.groupSize < 2)) throw new UserFacingError(`rl.groupSize must be an integer ≥ 2 (GSPO normalises rewards within a group); got ${rl.groupSize}`);
  const templateSet = { ...BUILTIN_TEMPLATES, ...spec.templateSet };
  const templates = spec.templates ?? DEFAULT_STAGE_TEMPLATES[spec.stage];
  const problems = checkDistribution(templates, templateSet);
  if (problems.length) throw new UserFacingError(`the ${spec.stage} template mix: ${problems.join('; ')}`);
  return {
    ...spec,
    templateSet,
    batch: spec.batch ?? 8,
    lr,
    evalEvery,
    evalBatches: spec.evalBatches ?? 2,
    evalJudgeSamples: spec.evalJudgeSamples ?? 2,
    evalFraction: spec.evalFraction ?? 0.1,
    seed: spec.seed ?? 0,
    templates,
    rl,
  };
}
export type ResolvedSpec = ReturnType<typeof resolveSpec>;

/** Text a tokenizer is trained on: every prompt, action and observation, and the knowledge texts. */
function tokenizerCorpus(trajectories: Trajectory[], domains: string[]): string[] {
  const texts: string[] = [];
  let size = 0;
  const LIMIT = 4_000_000; // characters: enough for stable merges, fast to count
  for (const d of domains) if ((DOMAINS as readonly string[]).includes(d)) texts.push(knowledgeText(d as KnownDomain));
  for (const t of trajectories) {
    if (size > LIMIT) break;
    const s = renderTrajectory(BUILTIN_TEMPLATES.v0, t);
    texts.push(s);
    size += s.length;
  }
  for (const v of Object.values(BUILTIN_TEMPLATES)) texts.push(v.preamble, v.closing, v.historyTurn, v.currentAction, ...v.sections.map((s) => s.heading));
  return texts;
}

/** Entropy of the unigram distribution of the weighted targets: the loss of a context-free model. */
export function unigramLoss(rows: EncodedRow[]): number {
  const counts = new Map<number, number>();
  let total = 0;
  for (const r of rows) {
    for (let i = 1; i < r.ids.length; i++) {
      const w = r.weights[i];
      if (w <= 0) continue;
      counts.set(r.ids[i], (counts.get(r.ids[i]) ?? 0) + w);
      total += w;
    }
  }
  let h = 0;
  for (const c of counts.values()) h -= (c / total) * Math.log(c / total);
  return h;
}

interface Prepared {
  tok: Tokenizer;
  config: ModelConfig;
  T: number;
  train: Trajectory[];
  eval: Trajectory[];
  /** Every trajectory of the run (train and eval), for dataset-level statistics such as boilerplate recurrence. */
  all: Trajectory[];
  start: { params: Float32Array; optimizer?: Checkpoint['optimizer']; step: number };
}

/** Tokenizer, config and starting weights: from a checkpoint when given, else fresh. */
export function prepare(spec: ResolvedSpec, trajectories: Trajectory[], from?: Uint8Array): Prepared {
  let data = trajectories;
  if (spec.domains?.length) data = data.filter((t) => spec.domains!.includes(t.domain));
  if (data.length === 0) throw new UserFacingError(`the dataset has no trajectories${spec.domains?.length ? ` in ${spec.domains.join(', ')}` : ''} to train on`);
  const split = splitByTrajectory(data, { evalFraction: spec.evalFraction, seed: spec.seed });
  if (split.train.length === 0) throw new UserFacingError('every trajectory went to the eval split; lower evalFraction or add data');
  let tok: Tokenizer;
  let config: ModelConfig;
  let start: Prepared['start'];
  if (from) {
    const ck = loadCheckpoint(from, { source: 'the starting checkpoint' });
    const tj = ck.extraMetadata?.tokenizer;
    if (!tj) throw new UserFacingError('the starting checkpoint has no tokenizer in its metadata; it was not written by LWM Studio training');
    tok = Tokenizer.fromJSON(JSON.parse(tj));
    config = ck.config;
    // Same stage: resume where it stopped (same batches, same schedule). New stage: weights only.
    const resume = ck.extraMetadata?.stage === spec.stage && ck.optimizer;
    start = resume ? { params: ck.params, optimizer: ck.optimizer, step: ck.step } : { params: ck.params, step: 0 };
  } else {
    const base = presetConfig(spec.preset);
    const vocab = spec.vocabSize ?? Math.max(384, base.vocabSize);
    tok = trainBpe(tokenizerCorpus(split.train, [...new Set(data.map((t) => t.domain))]), { vocabSize: vocab });
    config = presetConfig(spec.preset, { vocabSize: tok.vocabSize });
    start = { params: initParams(config, spec.seed), step: 0 };
  }
  const T = Math.min(spec.T ?? config.contextLength, config.contextLength);
  return { tok, config, T, train: split.train, eval: split.eval, all: data, start };
}

/** Rows of a stage for a trajectory set (CPT: packed text; SFT/RL: weighted turn samples). */
export function stageRows(
  stage: Stage,
  p: Pick<Prepared, 'tok' | 'T'>,
  trajectories: Trajectory[],
  templates: TemplateDistribution,
  seed: number,
  withKnowledge: boolean,
  templateSet: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES,
  /** Mask categories by trajectory id; default: categorised within `trajectories` alone. */
  masks: ReadonlyMap<string, TrajectoryMask> = new Map(stage === 'cpt' ? [] : categorizeDataset(trajectories).map((m) => [m.id, m])),
): EncodedRow[] {
  if (stage === 'cpt') {
    const texts: string[] = [];
    if (withKnowledge) for (const d of new Set(trajectories.map((t) => t.domain))) if ((DOMAINS as readonly string[]).includes(d)) texts.push(knowledgeText(d as KnownDomain));
    for (const t of trajectories) texts.push(renderTrajectory(templateForSample(templates, { trajectoryId: t.id, turnIndex: 0 }, seed, templateSet), t));
    return packCorpus(p.tok, texts, p.T);
  }
  const samples = expandTurns(trajectories);
  return encodeSftSamples(p.tok, samples, (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1, templates, { maxTokens: p.T + 1, seed, templates: templateSet });
}

function checkpointBytes(ck: Checkpoint, tok: Tokenizer, spec: ResolvedSpec): Uint8Array {
  return saveCheckpoint({
    ...ck,
    extraMetadata: { stage: spec.stage, tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify({ ...spec, kind: undefined }) },
  });
}

/**
 * SFT rows from chosen labels (e.g. rejectionSample's kept candidates): each sample's target is
 * the label, optionally preceded by its reasoning trace (trained on at `reasoningWeight`).
 */
export function labelledRows(
  p: Pick<Prepared, 'tok' | 'T'>,
  labelled: { sample: TurnSample; reasoning?: string; weight?: number }[],
  templates: TemplateDistribution,
  seed: number,
  templateSet: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES,
  reasoningWeight = 0.5,
): EncodedRow[] {
  return labelled.map(({ sample, reasoning, weight }) => {
    const row = encodeSftSample(p.tok, sample, templateForSample(templates, sample, seed, templateSet), weight ?? 1, { maxTokens: p.T + 1, reasoning });
    if (reasoning === undefined) return row;
    // The trace sits between the context and the tag: give it its own (lower) weight.
    const traceIds = p.tok.encode(`<think>\n${reasoning}\n</think>\n`, { allowSpecial: true }).length;
    const start = row.promptLength;
    for (let i = start; i < Math.min(row.ids.length, start + traceIds); i++) row.weights[i] = reasoningWeight;
    return row;
  });
}

/** Runs one stage. Resumable: a checkpoint from this stage continues at its step. */
export async function runTraining(
  specIn: TrainSpec,
  trajectories: Trajectory[],
  host: TrainHost,
  from?: Uint8Array,
  extra: { sftLabels?: { sample: TurnSample; reasoning?: string; weight?: number }[] } = {},
): Promise<TrainResult> {
  const spec = resolveSpec(specIn);
  const p = prepare(spec, trajectories, from);
  host.log(`${spec.stage}: ${p.train.length} train / ${p.eval.length} eval trajectories; model ${JSON.stringify(p.config)}; tokenizer ${p.tok.vocabSize} tokens; ${p.T} tokens per sequence`);
  if (spec.stage === 'rl') return runRl(spec, p, host);
  // Boilerplate is judged by recurrence across the whole dataset, so categorise once over all of
  // it; train and eval rows then weigh the same turn alike.
  const masks = new Map(spec.stage === 'cpt' ? [] : categorizeDataset(p.all).map((m) => [m.id, m]));
  const rows =
    spec.stage === 'sft' && extra.sftLabels?.length
      ? labelledRows(p, extra.sftLabels, spec.templates, spec.seed, spec.templateSet)
      : stageRows(spec.stage, p, p.train, spec.templates, spec.seed, true, spec.templateSet, masks);
  const evalRows = stageRows(spec.stage, p, p.eval.length ? p.eval : p.train.slice(0, 1), DEFAULT_STAGE_TEMPLATES.eval, spec.seed, false, spec.templateSet, masks);
  if (rows.length === 0) throw new UserFacingError(`the ${spec.stage} stage found no training rows in this dataset`);
  const coverage = reportCoverage(host, p.start.step, rows);
  const sampler = new BatchSampler(rows, spec.batch, p.T, p.tok.special.pad, spec.seed);
  const evalBatches = Array.from({ length: Math.min(spec.evalBatches, Math.ceil(evalRows.length / spec.batch)) }, (_, k) =>
    makeBatch(Array.from({ length: spec.batch }, (_, j) => evalRows[(k * spec.batch + j) % evalRows.length]), p.T, p.tok.special.pad),
  );
  const unigram = unigramLoss(evalRows);
  const model = await GpuGpt.create(host.rt, p.config, { batch: spec.batch, T: p.T });
  const gen = new GpuGenerator(host.rt, p.config, model.params, { maxSequences: 1, maxLength: p.config.contextLength });
  model.setParams(p.start.params, p.start.optimizer ? { ...p.start.optimizer } : undefined);
  model.step = p.start.step;
  const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps };
  let best: TrainResult['best'] = null;
  let lastEval: number | null = null;
  let tokens = 0;
  let ms = 0;
  const evaluate = async (step: number) => {
    let sum = 0;
    for (const b of evalBatches) sum += await model.evalLoss(b);
    const evalLoss = sum / Math.max(1, evalBatches.length);
    const judged = spec.stage === 'sft' && spec.evalJudgeSamples > 0 ? await judgeEval(gen, p, spec) : null;
    host.metric(step, { eval_loss: evalLoss, unigram_loss: unigram, ...(judged ?? {}) });
    lastEval = evalLoss;
    return evalLoss;
  };
  try {
    for (let step = model.step; step < spec.steps; step++) {
      await host.step();
      const batch = sampler.batch(step);
      const lr = lrAt(step, schedule);
      const t0 = performance.now();
      const r = await model.trainStep(batch, lr, { loss: true, gradNorm: true });
      const dt = performance.now() - t0;
      tokens += batch.B * batch.T;
      ms += dt;
      host.metric(step + 1, { loss: r.loss!, lr, grad_norm: r.gradNorm!, tokens_per_s: (batch.B * batch.T) / (dt / 1000) });
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.steps) {
        const evalLoss = await evaluate(step + 1);
        const ck = await model.toCheckpoint();
        const bytes = checkpointBytes(ck, p.tok, spec);
        await host.checkpoint(bytes, { step: step + 1, tag: 'last', evalLoss });
        if (!best || evalLoss < best.evalLoss) {
          best = { step: step + 1, evalLoss };
          await host.checkpoint(bytes, { step: step + 1, tag: 'best', evalLoss });
        }
      }
    }
    const final = checkpointBytes(await model.toCheckpoint(), p.tok, spec);
    return { stage: spec.stage, steps: spec.steps, checkpoint: final, best, evalLoss: lastEval, unigramLoss: unigram, tokensPerSecond: ms > 0 ? tokens / (ms / 1000) : 0, coverage };
  } finally {
    gen.dispose();
    model.dispose();
  }
}


/** Coverage of the rows (SPEC §11) as metrics at the first step, and one log line that says it in words. */
function reportCoverage(host: TrainHost, step: number, rows: readonly Pick<EncodedRow, 'coverage'>[]): Record<string, number> | undefined {
  const m = coverageMetrics(rows);
  if (!Object.keys(m).length) return undefined;
  const pct = (k: string) => (m[k] === undefined ? 'n/a' : `${(m[k] * 100).toFixed(1)}%`);
  host.log(
    `what the model sees (${rows.length} rows): ${pct('coverage_system')} of system-prompt tokens, ${pct('coverage_turns')} of history turns, ` +
      `${pct('coverage_initial_state')} of the initial state, the newest turn whole in ${pct('coverage_last_turn')} of rows with history` + (m.coverage_target === undefined ? '' : `, ${pct('coverage_target')} of target tokens`),
  );
  host.metric(step, m);
  return m;
}

/** Generates predictions for a few eval samples and scores them with the local judge. */
async function judgeEval(gen: GpuGenerator, p: Prepared, spec: ResolvedSpec): Promise<Record<string, number>> {
  const pool = rlPool(p.eval.length ? p.eval : p.train, spec.seed + 1).slice(0, spec.evalJudgeSamples);
  const sums: Record<string, number> = {};
  let n = 0;
  for (const sample of pool) {
    const template = templateForSample(DEFAULT_STAGE_TEMPLATES.eval, sample, spec.seed);
    const maxNew = Math.min(spec.rl.maxNewTokens, Math.floor(p.config.contextLength / 4));
    const prompt = encodePrompt(p.tok, sample, template, p.config.contextLength - maxNew);
    const out: number[] = [];
    for await (const t of gen.generate(prompt, { maxNewTokens: maxNew, sampling: { temperature: 0 }, stop: [p.tok.special.predictedClose, p.tok.special.eos] })) out.push(t);
    const prediction = extractPrediction(template.targetOpen + p.tok.decode(out));
    const v = await localJudge.judge(judgeInputFor(sample, renderSystem(template, sample), prediction));
    if (v.failed) continue;
    n++;
    for (const d of DIMENSIONS) sums[`eval_judge_${d}`] = (sums[`eval_judge_${d}`] ?? 0) + v.scores[d];
    sums.eval_judge_mean = (sums.eval_judge_mean ?? 0) + v.total;
  }
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(1, n)]));
}

// ---- RL ----------------------------------------------------------------------------------

async function runRl(spec: ResolvedSpec, p: Prepared, host: TrainHost): Promise<TrainResult> {
  const { groupSize: G, promptsPerStep, maxNewTokens, temperature, topK } = spec.rl;
  const pool = rlPool(p.train, spec.seed);
  if (pool.length === 0) throw new UserFacingError('the RL pool is empty: no trajectory has a turn');
  const T = p.T;
  if (maxNewTokens >= T - 8) throw new UserFacingError(`rl.maxNewTokens (${maxNewTokens}) leaves no room for a prompt in ${T} tokens`);
  const coverage = reportCoverage(
    host,
    Math.floor(p.start.step / promptsPerStep),
    pool.map((s) => fitPrompt(p.tok, templateForSample(spec.templates, s, spec.seed, spec.templateSet), s, T - maxNewTokens)),
  );
  const model = await GpuGpt.create(host.rt, p.config, { batch: G, T, rl: { Lmax: maxNewTokens, epsLow: spec.rl.epsLow, epsHigh: spec.rl.epsHigh } });
  const gen = new GpuGenerator(host.rt, p.config, model.params, { maxSequences: G, maxLength: T });
  model.setParams(p.start.params, p.start.optimizer ? { ...p.start.optimizer } : undefined);
  model.step = p.start.step;
  const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps * promptsPerStep };
  const stop = [p.tok.special.predictedClose, p.tok.special.eos];
  let best: TrainResult['best'] = null;
  let genTokens = 0;
  let genMs = 0;
  const rewardOf = (prediction: string, sample: TurnSample, context: string) => {
    if (host.reward) return host.reward(prediction, sample);
    return judgeReward(prediction, sample, context, spec.rl.rewardMix);
  };
  const firstStep = Math.floor(model.step / promptsPerStep);
  try {
    for (let step = firstStep; step < spec.steps; step++) {
      await host.step();
      const times = { rollout: 0, prefill: 0, judge: 0, update: 0 };
      // 1. Rollouts: G samples per prompt over a shared prefix, with the current weights.
      const groups: { sample: TurnSample; prompt: number[]; responses: number[][]; rewards: { reward: number; judge?: number; verifier?: number; scores?: Scores }[] }[] = [];
      for (let g = 0; g < promptsPerStep; g++) {
        const sample = pool[Math.floor(keyedUniform(`rl:${step}:${g}`, spec.seed) * pool.length)];
        const template = templateForSample(spec.templates, sample, spec.seed, spec.templateSet);
        const prompt = encodePrompt(p.tok, sample, template, T - maxNewTokens);
        const timing = { prefillMs: 0, decodeMs: 0 };
        const t0 = performance.now();
        const responses = await gen.generateGroup(prompt, G, { maxNewTokens, sampling: { temperature, topK, seed: spec.seed * 7919 + step * 131 + g }, stop, shared: true }, timing);
        times.rollout += performance.now() - t0;
        times.prefill += timing.prefillMs;
        genTokens += responses.reduce((n, r) => n + r.length, 0);
        genMs += performance.now() - t0;
        const t1 = performance.now();
        const context = renderSystem(template, sample);
        const rewards = responses.map((r) => rewardOf(extractPrediction(template.targetOpen + p.tok.decode(r)), sample, context));
        times.judge += performance.now() - t1;
        groups.push({ sample, prompt, responses, rewards });
      }
      // 2. π_old: log-probs of every group's responses before any update of this rollout batch.
      const tU = performance.now();
      const batches = groups.map((grp) => rlBatch(grp.prompt, grp.responses, T, maxNewTokens, p.tok.special.pad));
      const olds: Float32Array[] = [];
      for (const b of batches) olds.push(await model.responseLogprobs(b));
      // 3. One GSPO step per group.
      const stats = { objective: 0, clipFraction: 0, meanRatio: 0, gradNorm: 0 };
      for (let g = 0; g < groups.length; g++) {
        const adv = groupAdvantages(groups[g].rewards.map((r) => r.reward), G);
        const lr = lrAt(model.step, schedule);
        const s = await model.gspoStep(batches[g], olds[g], adv, lr, { gradNorm: true });
        stats.objective += s.objective / groups.length;
        stats.clipFraction += s.clipFraction / groups.length;
        stats.meanRatio += s.meanRatio / groups.length;
        stats.gradNorm += (s.gradNorm ?? 0) / groups.length;
      }
      times.update += performance.now() - tU;
      const all = groups.flatMap((g) => g.rewards);
      const mean = (f: (r: (typeof all)[number]) => number | undefined) => all.reduce((n, r) => n + (f(r) ?? 0), 0) / all.length;
      const dims: Record<string, number> = {};
      if (all.every((r) => r.scores)) for (const d of DIMENSIONS) dims[`judge_${d}`] = mean((r) => r.scores![d]);
      const total = times.rollout + times.judge + times.update;
      const responseTokens = groups.reduce((n, g) => n + g.responses.reduce((m, r) => m + r.length, 0), 0);
      host.metric(step + 1, {
        reward: mean((r) => r.reward),
        reward_judge: mean((r) => r.judge),
        reward_verifier: mean((r) => r.verifier),
        ...dims,
        clip_fraction: stats.clipFraction,
        mean_ratio: stats.meanRatio,
        loss: -stats.objective,
        grad_norm: stats.gradNorm,
        response_length: responseTokens / all.length,
        tokens_per_s: (responseTokens + groups.length * G * T) / (total / 1000),
        share_rollout: (times.rollout - times.prefill) / total,
        share_prefill: times.prefill / total,
        share_judge: times.judge / total,
        share_update: times.update / total,
      });
      const meanReward = mean((r) => r.reward);
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.steps) {
        const bytes = checkpointBytes(await model.toCheckpoint(), p.tok, spec);
        await host.checkpoint(bytes, { step: step + 1, tag: 'last' });
        // Higher reward is better: keep it under evalLoss as its negative so "lower is better" holds.
        if (!best || -meanReward < best.evalLoss) {
          best = { step: step + 1, evalLoss: -meanReward };
          await host.checkpoint(bytes, { step: step + 1, tag: 'best', evalLoss: -meanReward });
        }
      }
    }
    const final = checkpointBytes(await model.toCheckpoint(), p.tok, spec);
    return { stage: 'rl', steps: spec.steps, checkpoint: final, best, evalLoss: null, unigramLoss: null, tokensPerSecond: genMs > 0 ? genTokens / (genMs / 1000) : 0, coverage };
  } finally {
    gen.dispose();
    model.dispose();
  }
}

/** The SPEC §7 reward of one prediction: local rubric judge and rule verifier, mixed. */
export function judgeReward(prediction: string, sample: TurnSample, context: string, mix: RewardMix = DEFAULT_REWARD_MIX) {
  const input = judgeInputFor(sample, context, prediction);
  // The local judge is synchronous underneath; its Judge interface is async for LLM judges.
  const v = rubricJudge(input);
  const pass = verify(input).pass;
  const parts = mixReward(v.scores, pass, mix);
  return { ...parts, scores: v.scores };
}


/** Prompt + response sequences of one group as a model batch, with the response spans. */
function rlBatch(prompt: number[], responses: number[][], T: number, Lmax: number, pad: number) {
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
