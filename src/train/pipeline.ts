// The three training stages of SPEC §5–§7 on the GPU model, as one job that runs the same in a
// Web Worker (the app) and in Node (`lwm train`):
//
//   CPT  next-token prediction on packed text: each domain's knowledge text (manual pages, tool
//        schemas, corpus documents) plus whole trajectories rendered with the CPT template.
//   SFT  turn samples rendered with templates drawn from the SFT distribution; loss on the target
//        observation only, each token weighted by its turn's mask ratio (SPEC §4).
//   RL   GSPO on the RL pool (one turn per trajectory): G samples per prompt from a shared-prefix
//        rollout, rewards by the chosen kind (rubric judge + rule verifier 0.9 / 0.1, or the
//        binary reference comparison or Turing test) from the local or an endpoint judge,
//        advantages normalised within each group, one optimiser step per group so later groups
//        of a rollout batch see a policy that has moved (the ratio matters). Evaluation writes
//        greedy predictions for held-out turns and keeps the best checkpoint by their reward.
//
// Every stage: warmup + cosine learning rate, evaluation every N steps on the eval split (loss,
// and the local judge on a few generated predictions), the best checkpoint kept, a checkpoint
// that resumes the same loss curve.
import { knowledgeText } from '../core/envs/index.ts';
import { extractPrediction } from '../core/judge/extract.ts';
import { DEFAULT_REWARD_MIX, groupRewards, REWARD_KINDS, rewardOf, type RewardJudges, type RewardKind, type RewardMix, type SampleReward } from '../core/judge/reward.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { judgeInputFor } from '../core/judge/sample.ts';
import { DIMENSIONS, INVALID_SCORE, type JudgeInput } from '../core/judge/types.ts';
import { verify } from '../core/judge/verifier.ts';
import { categorizeDataset, maskConfig, maskConfigChanges, maskConfigFromJson, maskConfigToJson, type MaskConfig, type TrajectoryMask } from '../core/masking/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../core/schema/types.ts';
import { BUILTIN_TEMPLATES, checkDistribution, DEFAULT_STAGE_TEMPLATES, renderSystem, renderTrajectory, templateForSample, type PromptTemplate, type TemplateDistribution } from '../core/templates/index.ts';
import { Tokenizer, trainBpe } from '../core/tokenizer/index.ts';
import { expandTurns, rlPool, splitByTrajectory, type TurnSample } from '../core/turns/index.ts';
import { keyedUniform } from '../core/random.ts';
import type { GpuRuntime } from '../gpu/runtime.ts';
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from '../model/checkpoint.ts';
import { presetConfig, type ModelConfig } from '../model/config.ts';
import { GpuGenerator } from '../model/generate.ts';
import { GpuGpt } from '../model/gpt.ts';
import { initParams } from '../model/init.ts';
import { lrAt } from '../model/optim.ts';
import { groupAdvantages } from '../reference/gspo.ts';
import type { Stage, TrainSpec } from './spec.ts';
import { BatchSampler, coverageMetrics, encodePrompt, encodeSftSample, encodeSftSamples, makeBatch, packCorpus, type EncodedRow } from './data.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { UserFacingError } from './host.ts';
import type { SftLabel } from './rejection.ts';
import { advantagesWithFailures, BestTracker, ratioSpread, rewardJudges, sequenceRatios } from './rlMetrics.ts';
import { checkLabelSettings, rejectionLabels, type JudgeKind, type LabelSettings } from './teacher.ts';

// The spec types live in spec.ts, where storage and the app can import them without the
// pipeline; its own importers may still take them from here.
export type { Stage, TrainSpec } from './spec.ts';

/** What the pipeline needs from wherever it runs (worker or Node). */
export interface TrainHost {
  rt: GpuRuntime;
  /** Between steps: waits while paused; throws to stop. */
  step(): Promise<void>;
  metric(step: number, values: Record<string, number>): void;
  log(message: string): void;
  /** A checkpoint to keep: 'last' at every checkpoint point, 'best' when eval improves. */
  checkpoint(bytes: Uint8Array, info: { step: number; tag: 'last' | 'best'; evalLoss?: number }): Promise<void> | void;
  /** Replaces the judge+verifier reward, in rollouts and in evaluation (tests: a toy reward). */
  reward?: (prediction: string, sample: TurnSample, phase: 'train' | 'eval') => { reward: number; judge?: number; verifier?: number };
}

export interface TrainResult {
  stage: Stage;
  steps: number;
  /** The final state (weights, Adam, tokenizer), as safetensors bytes. */
  checkpoint: Uint8Array;
  /** The best checkpoint by evaluation (RL: by held-out reward, stored as evalLoss = −reward). */
  best: { step: number; evalLoss: number; evalReward?: number } | null;
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
  const rl = { groupSize: 4, promptsPerStep: 2, maxNewTokens: 32, temperature: 1, topK: 0, rewardMix: DEFAULT_REWARD_MIX, reward: 'rubric' as RewardKind, rewardJudge: 'local' as JudgeKind, evalSamples: 8, ...spec.rl };
  if (spec.stage === 'rl' && (!Number.isInteger(rl.groupSize) || rl.groupSize < 2)) throw new UserFacingError(`rl.groupSize must be an integer ≥ 2 (GSPO normalises rewards within a group); got ${rl.groupSize}`);
  if (spec.stage === 'rl' && !REWARD_KINDS.includes(rl.reward)) throw new UserFacingError(`rl.reward must be one of ${REWARD_KINDS.join(', ')}; got '${rl.reward}'`);
  if (spec.stage === 'rl' && rl.rewardJudge !== 'local' && rl.rewardJudge !== 'endpoint') throw new UserFacingError(`rl.rewardJudge must be local or endpoint; got '${rl.rewardJudge}'`);
  if (spec.stage === 'rl' && rl.rewardJudge === 'endpoint' && (!rl.judgeEndpoint?.baseUrl || !rl.judgeEndpoint.model)) throw new UserFacingError('an endpoint reward judge needs rl.judgeEndpoint with a base URL and a model');
  if (spec.stage === 'rl' && (!Number.isInteger(rl.evalSamples) || rl.evalSamples < 1)) throw new UserFacingError(`rl.evalSamples must be a positive integer; got ${rl.evalSamples}`);
  if (spec.labels) {
    if (spec.stage !== 'sft') throw new UserFacingError(`labels are for the SFT stage (they replace its reference observations); this is ${spec.stage}`);
    checkLabelSettings(spec.labels);
  }
  // GSPO's old and new log-probs are those of softmax(logits/τ), the distribution the rollouts are
  // drawn from; greedy or top-k rollouts would be drawn from another one.
  if (spec.stage === 'rl' && !(rl.temperature > 0 && Number.isFinite(rl.temperature))) throw new UserFacingError(`rl.temperature must be a number above 0 (rollouts are sampled); got ${rl.temperature}`);
  if (spec.stage === 'rl' && rl.topK !== 0) throw new UserFacingError(`rl.topK must be 0: GSPO's log-probs are those of the full tempered distribution the rollouts are sampled from; got ${rl.topK}`);
  const templateSet = { ...BUILTIN_TEMPLATES, ...spec.templateSet };
  const templates = spec.templates ?? DEFAULT_STAGE_TEMPLATES[spec.stage];
  const problems = checkDistribution(templates, templateSet);
  if (problems.length) throw new UserFacingError(`the ${spec.stage} template mix: ${problems.join('; ')}`);
  let mask: MaskConfig;
  try {
    mask = spec.mask ? maskConfigFromJson(spec.mask, 'the mask configuration') : maskConfig();
  } catch (e) {
    throw new UserFacingError((e as Error).message);
  }
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
    /** SFT on chosen labels (spec.labels here, or labels passed to runTraining). */
    sftLabelled: spec.stage === 'sft' && !!spec.labels,
    templates,
    rl,
    mask,
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
    // SFT on chosen labels and SFT on the reference observations train on different rows, so
    // one never resumes the other (an SFT teacher's checkpoint starts a labelled run afresh).
    const resume = ck.extraMetadata?.stage === spec.stage && ck.optimizer && labelledRun(ck.extraMetadata?.spec) === spec.sftLabelled;
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

/** Whether a checkpoint's stored spec was an SFT run on chosen labels. */
function labelledRun(specJson: string | undefined): boolean {
  try {
    return !!(specJson && (JSON.parse(specJson) as { sftLabelled?: boolean }).sftLabelled);
  } catch {
    return false;
  }
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
    extraMetadata: {
      stage: spec.stage,
      tokenizer: JSON.stringify(tok.toJSON()),
      spec: JSON.stringify({ ...spec, kind: undefined }),
      ...(spec.stage === 'sft' ? { mask_config: maskConfigToJson(spec.mask) } : {}),
    },
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

/**
 * The labels a run trains on: only those of train-split trajectories (a label of a held-out turn
 * would leak it), each at its turn's mask weight in this run unless the label carries its own.
 */
export function trainLabels(labels: SftLabel[], p: Pick<Prepared, 'train'>, masks: ReadonlyMap<string, TrajectoryMask>, host?: Pick<TrainHost, 'log'>): SftLabel[] {
  const train = new Set(p.train.map((t) => t.id));
  const kept = labels.filter((l) => train.has(l.sample.trajectoryId));
  if (kept.length < labels.length) host?.log(`labels: ${labels.length - kept.length} of ${labels.length} belong to eval-split trajectories and are left out (made with another seed or eval share?)`);
  if (kept.length === 0) throw new UserFacingError(`none of the ${labels.length} labels belongs to a train-split trajectory of this run`);
  return kept.map((l) => ({ ...l, weight: l.weight ?? masks.get(l.sample.trajectoryId)?.turns[l.sample.turnIndex]?.weight ?? 1 }));
}

/** Runs one stage. Resumable: a checkpoint from this stage continues at its step. */
export async function runTraining(
  specIn: TrainSpec,
  trajectories: Trajectory[],
  host: TrainHost,
  from?: Uint8Array,
  extra: {
    sftLabels?: SftLabel[];
    /** RL: the reward judges (default: built from spec.rl, with `judgeApiKey` for an endpoint). */
    rewardJudges?: RewardJudges;
    judgeApiKey?: string;
    /** SFT with spec.labels: the teacher's endpoint key, and the local teacher (default: `from` on a fresh run). */
    teacherApiKey?: string;
    teacherCheckpoint?: Uint8Array;
    /** A resumed run's best checkpoint so far (RL: evalLoss = −reward), so a worse one never replaces it. */
    bestSoFar?: { step: number; evalLoss: number };
  } = {},
): Promise<TrainResult> {
  const spec = resolveSpec(specIn);
  if (spec.stage === 'sft' && extra.sftLabels?.length) spec.sftLabelled = true;
  const p = prepare(spec, trajectories, from);
  host.log(`${spec.stage}: ${p.train.length} train / ${p.eval.length} eval trajectories; model ${JSON.stringify(p.config)}; tokenizer ${p.tok.vocabSize} tokens; ${p.T} tokens per sequence`);
  if (spec.stage === 'rl') {
    const judges = extra.rewardJudges ?? rewardJudges(spec.rl.rewardJudge, spec.rl.judgeEndpoint && { ...spec.rl.judgeEndpoint, apiKey: extra.judgeApiKey });
    return runRl(spec, p, host, judges, p.start.step > 0 ? extra.bestSoFar : undefined);
  }
  // Boilerplate is judged by recurrence across the whole dataset, so categorise once over all of
  // it; train and eval rows then weigh the same turn alike.
  const masks = new Map(spec.stage === 'cpt' ? [] : categorizeDataset(p.all, spec.mask).map((m) => [m.id, m]));
  if (spec.stage === 'sft') host.log(`loss mask: ${maskConfigChanges(spec.mask).join(', ') || 'the default thresholds and ratios'}`);
  let sftLabels = extra.sftLabels;
  if (spec.stage === 'sft' && spec.labels && !sftLabels?.length) {
    sftLabels = await rejectionLabels(spec.labels, expandTurns(p.train), {
      rt: host.rt,
      seed: spec.seed,
      weightOf: (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1,
      // A resumed run's `from` is its own last checkpoint, not the teacher.
      teacherCheckpoint: extra.teacherCheckpoint ?? (p.start.step === 0 ? from : undefined),
      teacherApiKey: extra.teacherApiKey,
      judgeApiKey: extra.judgeApiKey,
      log: (m) => host.log(m),
      metric: (step, v) => host.metric(step, v),
    });
  }
  const rows =
    spec.stage === 'sft' && sftLabels?.length
      ? labelledRows(p, trainLabels(sftLabels, p, masks, host), spec.templates, spec.seed, spec.templateSet)
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
  let best: TrainResult['best'] = p.start.step > 0 && extra.bestSoFar ? { ...extra.bestSoFar } : null;
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

async function runRl(spec: ResolvedSpec, p: Prepared, host: TrainHost, judges: RewardJudges, bestSoFar?: { step: number; evalLoss: number }): Promise<TrainResult> {
  const { groupSize: G, promptsPerStep, maxNewTokens, temperature, topK } = spec.rl;
  const pool = rlPool(p.train, spec.seed);
  if (pool.length === 0) throw new UserFacingError('the RL pool is empty: no trajectory has a turn');
  const T = p.T;
  if (maxNewTokens >= T - 8) throw new UserFacingError(`rl.maxNewTokens (${maxNewTokens}) leaves no room for a prompt in ${T} tokens`);
  if (!p.eval.length) host.log('rl: no eval-split trajectories: evaluation falls back to training turns, so the best checkpoint is chosen on data it trained on');
  host.log(`rl: reward ${spec.rl.reward} judged by ${judges.judge.name}; evaluation on ${spec.rl.evalSamples} held-out turns every ${spec.evalEvery} steps (rubric + verifier reward)`);
  const coverage = reportCoverage(
    host,
    Math.floor(p.start.step / promptsPerStep),
    pool.map((s) => fitPrompt(p.tok, templateForSample(spec.templates, s, spec.seed, spec.templateSet), s, T - maxNewTokens)),
  );
  const model = await GpuGpt.create(host.rt, p.config, { batch: G, T, rl: { Lmax: maxNewTokens, epsLow: spec.rl.epsLow, epsHigh: spec.rl.epsHigh, temperature } });
  const gen = new GpuGenerator(host.rt, p.config, model.params, { maxSequences: G, maxLength: T });
  model.setParams(p.start.params, p.start.optimizer ? { ...p.start.optimizer } : undefined);
  model.step = p.start.step;
  const schedule = { maxLr: spec.lr.peak, minLr: spec.lr.min, warmupSteps: spec.lr.warmup, totalSteps: spec.steps * promptsPerStep };
  const stop = [p.tok.special.predictedClose, p.tok.special.eos];
  const best = new BestTracker();
  if (bestSoFar) best.best = { step: bestSoFar.step, value: -bestSoFar.evalLoss };
  let genTokens = 0;
  let genMs = 0;
  const rewardsOf = async (predictions: string[], sample: TurnSample, context: string, key: string): Promise<(SampleReward | null)[]> => {
    if (host.reward) return predictions.map((x) => ({ pass: false, ...host.reward!(x, sample, 'train') }));
    return groupRewards(spec.rl.reward, judges, judgeTurn(sample, context), predictions, { mix: spec.rl.rewardMix, key, seed: spec.seed });
  };
  const firstStep = Math.floor(model.step / promptsPerStep);
  try {
    for (let step = firstStep; step < spec.steps; step++) {
      await host.step();
      const times = { rollout: 0, prefill: 0, judge: 0, update: 0 };
      // 1. Rollouts: G samples per prompt over a shared prefix, with the current weights.
      const groups: { sample: TurnSample; prompt: number[]; responses: number[][]; rewards: (SampleReward | null)[] }[] = [];
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
        const rewards = await rewardsOf(responses.map((r) => extractPrediction(template.targetOpen + p.tok.decode(r))), sample, context, `rl:${step}:${g}`);
        times.judge += performance.now() - t1;
        groups.push({ sample, prompt, responses, rewards });
      }
      // 2. π_old: log-probs of every group's responses before any update of this rollout batch.
      const tU = performance.now();
      const batches = groups.map((grp) => rlBatch(grp.prompt, grp.responses, T, maxNewTokens, p.tok.special.pad));
      // The first group's step runs at those weights, so its own forward gives π_old: no extra pass.
      const olds: (Float32Array | 'current')[] = ['current'];
      for (const b of batches.slice(1)) olds.push(await model.responseLogprobs(b));
      // 3. One GSPO step per group. The first group's ratios are 1 (π_θ = π_old); later groups
      //    see a policy that has moved, and their s_i are read before the step that uses them.
      const stats = { objective: 0, clipFraction: 0, meanRatio: 0, gradNorm: 0 };
      const ratios: number[] = [];
      for (let g = 0; g < groups.length; g++) {
        const lengths = batches[g].spans.map((sp) => sp.len);
        if (g === 0) ratios.push(...lengths.map(() => 1));
        else ratios.push(...sequenceRatios(await model.responseLogprobs(batches[g]), olds[g] as Float32Array, lengths, maxNewTokens));
        const adv = advantagesWithFailures(groups[g].rewards.map((r) => r?.reward ?? null));
        const lr = lrAt(model.step, schedule);
        const s = await model.gspoStep(batches[g], olds[g], adv, lr, { gradNorm: true });
        stats.objective += s.objective / groups.length;
        stats.clipFraction += s.clipFraction / groups.length;
        stats.meanRatio += s.meanRatio / groups.length;
        stats.gradNorm += (s.gradNorm ?? 0) / groups.length;
      }
      times.update += performance.now() - tU;
      const all = groups.flatMap((g) => g.rewards).filter((r): r is SampleReward => r !== null);
      const failed = groups.reduce((n, g) => n + g.rewards.filter((r) => r === null).length, 0);
      const mean = (f: (r: SampleReward) => number | undefined) => (all.length ? all.reduce((n, r) => n + (f(r) ?? 0), 0) / all.length : NaN);
      const dims: Record<string, number> = {};
      if (all.length && all.every((r) => r.scores)) for (const d of DIMENSIONS) dims[`judge_${d}`] = mean((r) => r.scores![d]);
      const parts: Record<string, number> = spec.rl.reward === 'rubric' && !host.reward ? { reward_judge: mean((r) => r.judge), reward_verifier: mean((r) => r.verifier) } : {};
      const total = times.rollout + times.judge + times.update;
      const responseTokens = groups.reduce((n, g) => n + g.responses.reduce((m, r) => m + r.length, 0), 0);
      const spread = ratioSpread(ratios);
      host.metric(step + 1, {
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
        tokens_per_s: (responseTokens + groups.length * G * T) / (total / 1000),
        share_rollout: (times.rollout - times.prefill) / total,
        share_prefill: times.prefill / total,
        share_judge: times.judge / total,
        share_update: times.update / total,
      });
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.steps) {
        const ev = await evaluateRl(gen, p, spec, judges, host);
        host.metric(step + 1, ev);
        const bytes = checkpointBytes(await model.toCheckpoint(), p.tok, spec);
        await host.checkpoint(bytes, { step: step + 1, tag: 'last' });
        // The best checkpoint by the held-out reward; stored under evalLoss as its negative so
        // "lower is better" holds for every stage.
        if (ev.eval_reward !== undefined && best.offer(step + 1, ev.eval_reward)) await host.checkpoint(bytes, { step: step + 1, tag: 'best', evalLoss: -ev.eval_reward });
      }
    }
    const final = checkpointBytes(await model.toCheckpoint(), p.tok, spec);
    const b = best.best && { step: best.best.step, evalLoss: -best.best.value, evalReward: best.best.value };
    return { stage: 'rl', steps: spec.steps, checkpoint: final, best: b, evalLoss: null, unigramLoss: null, tokensPerSecond: genMs > 0 ? genTokens / (genMs / 1000) : 0, coverage };
  } finally {
    gen.dispose();
    model.dispose();
  }
}

/** What a judge sees of a turn, before the prediction is known. */
function judgeTurn(sample: TurnSample, context: string): Omit<JudgeInput, 'prediction'> {
  const { prediction: _, ...turn } = judgeInputFor(sample, context, '');
  void _;
  return turn;
}

/**
 * Held-out evaluation of the policy (SPEC §7 figures): one greedy prediction for each of
 * `evalSamples` eval-split turns (one per trajectory), judged on the five dimensions and checked
 * by the verifier. Whatever reward trains the policy, `eval_reward` is the rubric + verifier
 * reward, so runs with different rewards are compared on one scale; it picks the best checkpoint.
 */
async function evaluateRl(gen: GpuGenerator, p: Prepared, spec: ResolvedSpec, judges: RewardJudges, host: TrainHost): Promise<Record<string, number>> {
  const pool = rlPool(p.eval.length ? p.eval : p.train, spec.seed + 1).slice(0, spec.rl.evalSamples);
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
    const template = templateForSample(DEFAULT_STAGE_TEMPLATES.eval, sample, spec.seed, spec.templateSet);
    const prompt = encodePrompt(p.tok, sample, template, p.T - maxNew);
    const out: number[] = [];
    for await (const t of gen.generate(prompt, { maxNewTokens: maxNew, sampling: { temperature: 0 }, stop: [p.tok.special.predictedClose, p.tok.special.eos] })) out.push(t);
    const prediction = extractPrediction(template.targetOpen + p.tok.decode(out));
    if (host.reward) {
      add('eval_reward', host.reward(prediction, sample, 'eval').reward);
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
  }
  const out: Record<string, number> = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / counts[k]]));
  out.eval_failed = failed;
  return out;
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
