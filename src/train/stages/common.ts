// What every training stage shares: the host interface, the resolved spec (defaults applied),
// the tokenizer/config/starting weights of a run, checkpoint bytes and the coverage report.
import { knowledgeText } from '../../envs/index.ts';
import { DEFAULT_REWARD_MIX, REWARD_KINDS, type RewardKind } from '../../core/judge/reward.ts';
import { maskConfig, maskConfigFromJson, maskConfigToJson, type MaskConfig } from '../../core/masking/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../../core/schema/types.ts';
import {
  BUILTIN_TEMPLATES,
  checkDistribution,
  DEFAULT_STAGE_TEMPLATES,
  renderTrajectory,
  templateLiterals,
  normalizeTemplates,
  type PromptTemplate,
} from '../../core/templates/index.ts';
import { Tokenizer, trainBpe } from '../../core/tokenizer/index.ts';
import type { TurnSample } from '../../core/turns/index.ts';
import { splitByTrajectory } from '../../core/turns/index.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from '../../core/model/checkpoint.ts';
import { presetConfig, type ModelConfig } from '../../core/model/config.ts';
import { initParams } from '../../model/init.ts';
import { GpuGenerator } from '../../model/generate.ts';
import type { GpuModel } from '../../model/gpt.ts';
import { GpuTrainer, type GpuTrainerOptions } from '../../model/trainer.ts';
import { isLoraCheckpoint, loadLoraCheckpoint, saveLoraCheckpoint } from '../../model/hf/adapter.ts';
import { baseFromJson, baseToJson, openHfBase, type HfBase, type OpenedBase } from '../../model/hf/base.ts';
import { initLora, loraLayout, loraSettings, type LoraLayout } from '../../model/lora.ts';
import { chatTokenizer } from '../chat.ts';
import type { Stage, TrainSpec } from '../../core/trainSpec.ts';
import { coverageMetrics, type EncodedRow } from '../data.ts';
import { UserFacingError } from '../context.ts';
import type { RewardJudges } from '../../core/judge/reward.ts';
import type { SftLabel } from '../rejection.ts';
import type { DomainFigures } from '../domainMetrics.ts';
import { checkLabelSettings, type JudgeKind } from '../teacher.ts';

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
  /** The last evaluation's figures per domain ({terminal: {eval_loss: …}}; the `<metric>/<domain>` metrics, domainMetrics.ts). */
  evalByDomain?: DomainFigures;
}

/** What a run may bring besides the spec and the data. */
export interface RunExtra {
  sftLabels?: SftLabel[];
  /** RL: the reward judges (default: built from spec.rl, with `judgeApiKey` for an endpoint). */
  rewardJudges?: RewardJudges;
  judgeApiKey?: string;
  /** SFT with spec.labels: the teacher's endpoint key, and the local teacher (default: `from` on a fresh run). */
  teacherApiKey?: string;
  teacherCheckpoint?: Uint8Array;
  /** A resumed run's best checkpoint so far (RL: evalLoss = −reward), so a worse one never replaces it. */
  bestSoFar?: { step: number; evalLoss: number };
  /**
   * A Hugging Face folder the run starts from (model/hf/base.ts: its text files and weights): its
   * tokenizer and chat format replace ours. A LoRA checkpoint in `from` needs it too (the frozen weights).
   */
  hfBase?: { base: HfBase; params: Float32Array };
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
  const rl = {
    groupSize: 4,
    promptsPerStep: 2,
    maxNewTokens: 32,
    temperature: 1,
    topK: 0,
    rewardMix: DEFAULT_REWARD_MIX,
    reward: 'rubric' as RewardKind,
    rewardJudge: 'local' as JudgeKind,
    evalSamples: 8,
    sharedPrefix: true,
    ...spec.rl,
  };
  if (spec.stage === 'rl' && (!Number.isInteger(rl.groupSize) || rl.groupSize < 2))
    throw new UserFacingError(`rl.groupSize must be an integer ≥ 2 (GSPO normalises rewards within a group); got ${rl.groupSize}`);
  if (spec.stage === 'rl' && !REWARD_KINDS.includes(rl.reward))
    throw new UserFacingError(`rl.reward must be one of ${REWARD_KINDS.join(', ')}; got '${rl.reward}'`);
  if (spec.stage === 'rl' && rl.rewardJudge !== 'local' && rl.rewardJudge !== 'endpoint')
    throw new UserFacingError(`rl.rewardJudge must be local or endpoint; got '${rl.rewardJudge}'`);
  if (spec.stage === 'rl' && rl.rewardJudge === 'endpoint' && (!rl.judgeEndpoint?.baseUrl || !rl.judgeEndpoint.model))
    throw new UserFacingError('an endpoint reward judge needs rl.judgeEndpoint with a base URL and a model');
  if (spec.stage === 'rl' && (!Number.isInteger(rl.evalSamples) || rl.evalSamples < 1))
    throw new UserFacingError(`rl.evalSamples must be a positive integer; got ${rl.evalSamples}`);
  if (spec.labels) {
    if (spec.stage !== 'sft') throw new UserFacingError(`labels are for the SFT stage (they replace its reference observations); this is ${spec.stage}`);
    checkLabelSettings(spec.labels);
  }
  // GSPO's old and new log-probs are those of softmax(logits/τ), the distribution the rollouts are
  // drawn from; greedy or top-k rollouts would be drawn from another one.
  if (spec.stage === 'rl' && !(rl.temperature > 0 && Number.isFinite(rl.temperature)))
    throw new UserFacingError(`rl.temperature must be a number above 0 (rollouts are sampled); got ${rl.temperature}`);
  if (spec.stage === 'rl' && rl.topK !== 0)
    throw new UserFacingError(`rl.topK must be 0: GSPO's log-probs are those of the full tempered distribution the rollouts are sampled from; got ${rl.topK}`);
  const templateSet = { ...BUILTIN_TEMPLATES, ...normalizeTemplates(spec.templateSet) };
  const templates = spec.templates ?? DEFAULT_STAGE_TEMPLATES[spec.stage];
  const problems = checkDistribution(templates, templateSet);
  if (problems.length) throw new UserFacingError(`the ${spec.stage} template mix: ${problems.join('; ')}`);
  const evalTemplates = spec.evalTemplates ?? DEFAULT_STAGE_TEMPLATES.eval;
  const evalProblems = checkDistribution(evalTemplates, templateSet);
  if (evalProblems.length) throw new UserFacingError(`the evaluation template mix: ${evalProblems.join('; ')}`);
  const rows = spec.rows ?? 'turn';
  if (rows !== 'turn' && rows !== 'trajectory') throw new UserFacingError(`rows must be turn or trajectory; got '${String(rows)}'`);
  if (spec.answerRoom !== undefined && (!Number.isSafeInteger(spec.answerRoom) || spec.answerRoom < 1))
    throw new UserFacingError(`answerRoom must be a whole number of tokens, at least 1; got ${String(spec.answerRoom)}`);
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
    evalTemplates,
    rows,
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
  for (const v of Object.values(BUILTIN_TEMPLATES)) texts.push(...templateLiterals(v.text));
  return texts;
}

export interface Prepared {
  tok: Tokenizer;
  config: ModelConfig;
  T: number;
  train: Trajectory[];
  eval: Trajectory[];
  /** Every trajectory of the run (train and eval), for dataset-level statistics such as boilerplate recurrence. */
  all: Trajectory[];
  start: { params: Float32Array; optimizer?: Checkpoint['optimizer']; step: number };
  /** A run of a Hugging Face model: its files (kept in every checkpoint) and what they give. */
  hf?: {
    base: HfBase;
    opened: OpenedBase;
    /**
     * The run's templates as written, before runTraining wraps them in the model's chat format:
     * what its checkpoints keep in their spec, so an export writes the unwrapped template
     * (lwm_template.json) and a backend wraps it again as training did.
     */
    templates?: Readonly<Record<string, PromptTemplate>>;
  };
  /** A LoRA run: the adapter's layout and starting weights (and Adam state when it resumes). */
  lora?: { layout: LoraLayout; params: Float32Array; optimizer?: Checkpoint['optimizer']; baseWeights?: 'f32' | 'f16' };
}

/** Tokenizer, config and starting weights: from a checkpoint when given, else fresh. */
export function prepare(spec: ResolvedSpec, trajectories: Trajectory[], from?: Uint8Array, hfBase?: RunExtra['hfBase']): Prepared {
  let data = trajectories;
  if (spec.domains?.length) data = data.filter((t) => spec.domains!.includes(t.domain));
  if (data.length === 0)
    throw new UserFacingError(`the dataset has no trajectories${spec.domains?.length ? ` in ${spec.domains.join(', ')}` : ''} to train on`);
  const split = splitByTrajectory(data, { evalFraction: spec.evalFraction, seed: spec.seed });
  if (split.train.length === 0) throw new UserFacingError('every trajectory went to the eval split; lower evalFraction or add data');
  const hf =
    from && isLoraCheckpoint(from)
      ? prepareLoraResume(spec, from, hfBase)
      : from
        ? prepareHfCheckpoint(spec, from)
        : hfBase
          ? prepareHfStart(spec, hfBase)
          : null;
  if (spec.lora && !hf) throw new UserFacingError('LoRA trains an adapter on a pretrained model: start from a Hugging Face folder (--from HF_FOLDER)');
  if (hf) {
    const T = Math.min(spec.T ?? hf.config.contextLength, hf.config.contextLength);
    return { ...hf, T, train: split.train, eval: split.eval, all: data };
  }
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
    // Its context is the rows' length: a model is never served prompts at positions it did not
    // train (learned positions past T would be their initial noise). Each tensor draws from its
    // own stream (initParams), so the other weights are those of the preset's full context.
    config = presetConfig(spec.preset, { vocabSize: tok.vocabSize, contextLength: Math.min(spec.T ?? base.contextLength, base.contextLength) });
    start = { params: initParams(config, spec.seed), step: 0 };
  }
  const T = Math.min(spec.T ?? config.contextLength, config.contextLength);
  return { tok, config, T, train: split.train, eval: split.eval, all: data, start };
}

type HfPrepared = Pick<Prepared, 'tok' | 'config' | 'start' | 'hf' | 'lora'>;

function openedBase(base: HfBase): Pick<HfPrepared, 'tok' | 'config' | 'hf'> {
  try {
    const opened = openHfBase(base);
    return { tok: chatTokenizer(opened.tokenizer, opened.stopIds), config: opened.config, hf: { base, opened } };
  } catch (e) {
    throw new UserFacingError(`the base model ${base.name}: ${(e as Error).message}`);
  }
}

/** A fresh adapter of the spec's settings (or none without spec.lora). */
function freshLora(spec: ResolvedSpec, config: ModelConfig): Prepared['lora'] {
  if (!spec.lora) return undefined;
  try {
    const layout = loraLayout(config, loraSettings(spec.lora.rank, spec.lora.alpha, spec.lora.targets));
    return { layout, params: initLora(layout, spec.seed), ...(spec.lora.baseWeights && { baseWeights: spec.lora.baseWeights }) };
  } catch (e) {
    throw new UserFacingError((e as Error).message);
  }
}

/** A run that starts from a Hugging Face folder's weights (full fine-tuning, or LoRA with spec.lora). */
function prepareHfStart(spec: ResolvedSpec, hfBase: NonNullable<RunExtra['hfBase']>): HfPrepared {
  const o = openedBase(hfBase.base);
  return { ...o, start: { params: hfBase.params, step: 0 }, lora: freshLora(spec, o.config) };
}

/** A LoRA run's checkpoint: the same stage resumes (adapter and Adam state), another trains the adapter on. */
function prepareLoraResume(spec: ResolvedSpec, from: Uint8Array, hfBase: RunExtra['hfBase']): HfPrepared {
  let ck;
  try {
    ck = loadLoraCheckpoint(from, 'the starting adapter');
  } catch (e) {
    throw new UserFacingError((e as Error).message);
  }
  if (!hfBase) throw new UserFacingError(`the starting adapter trains on ${ck.baseModel || 'a base model'}, whose weights were not given`);
  const o = openedBase(hfBase.base);
  if (configToJsonSafe(o.config) !== configToJsonSafe(ck.config))
    throw new UserFacingError(`the starting adapter was trained on another model than ${hfBase.base.name}`);
  if (spec.lora && spec.lora.rank !== ck.settings.rank) throw new UserFacingError(`the starting adapter has rank ${ck.settings.rank}, not ${spec.lora.rank}`);
  const resume = ck.extraMetadata?.stage === spec.stage && !!ck.optimizer;
  const layout = loraLayout(ck.config, ck.settings);
  return {
    ...o,
    start: { params: hfBase.params, step: resume ? ck.step : 0 },
    lora: { layout, params: ck.lora, ...(resume && { optimizer: ck.optimizer }), ...(spec.lora?.baseWeights && { baseWeights: spec.lora.baseWeights }) },
  };
}

const configToJsonSafe = (c: ModelConfig) => JSON.stringify(Object.entries(c).sort());

/** A full checkpoint of a Hugging Face model (it carries its base's files); null for our own models. */
function prepareHfCheckpoint(spec: ResolvedSpec, from: Uint8Array): HfPrepared | null {
  const ck = loadCheckpoint(from, { source: 'the starting checkpoint' });
  const meta = ck.extraMetadata?.hf_base;
  if (!meta) return null;
  if (spec.lora) throw new UserFacingError('LoRA starts from a Hugging Face folder (--from HF_FOLDER), not from a fine-tuned checkpoint');
  const o = openedBase(baseFromJson(meta));
  const resume = ck.extraMetadata?.stage === spec.stage && !!ck.optimizer && !spec.lora && labelledRun(ck.extraMetadata?.spec) === spec.sftLabelled;
  return {
    ...o,
    start: resume ? { params: ck.params, optimizer: ck.optimizer, step: ck.step } : { params: ck.params, step: 0 },
    lora: freshLora(spec, o.config),
  };
}

/** The run's model on the GPU and its trainer, with the starting state (the adapter too, for LoRA). */
export async function createRunModel(rt: GpuRuntime, p: Prepared, options: Omit<GpuTrainerOptions, 'lora'>): Promise<GpuTrainer> {
  const trainer = await GpuTrainer.create(rt, p.config, { ...options, ...(p.lora && { lora: p.lora.layout, weights: p.lora.baseWeights ?? 'f32' }) });
  const optimizer = p.lora ? p.lora.optimizer : p.start.optimizer;
  trainer.setParams(p.start.params, optimizer ? { ...optimizer } : undefined);
  if (p.lora) trainer.model.setLora(p.lora.params);
  trainer.step = p.start.step;
  return trainer;
}

/** A generator on the run's model (with its adapter, so it sees the latest one). */
export function runGenerator(rt: GpuRuntime, p: Prepared, model: GpuModel, limits: { maxSequences: number; maxLength: number }): GpuGenerator {
  return new GpuGenerator(rt, p.config, model.params, {
    ...limits,
    ...(p.lora && model.adapter && { lora: { layout: p.lora.layout, params: model.adapter.only } }),
  });
}

/** The metadata of a Hugging Face model's checkpoint: the stage, the spec (its templates as written, not wrapped), the base's files. */
export function hfCheckpointMetadata(p: Pick<Prepared, 'hf'> & { hf: NonNullable<Prepared['hf']> }, spec: ResolvedSpec): Record<string, string> {
  return {
    stage: spec.stage,
    spec: JSON.stringify({ ...spec, kind: undefined, templateSet: p.hf.templates }),
    hf_base: baseToJson(p.hf.base),
    ...(spec.stage === 'sft' ? { mask_config: maskConfigToJson(spec.mask) } : {}),
  };
}

/** The run's state as checkpoint bytes: ours, ours with the base's files, or a LoRA adapter (PEFT's names) with its Adam state. */
export async function runCheckpointBytes(model: GpuTrainer, p: Prepared, spec: ResolvedSpec): Promise<Uint8Array> {
  if (!p.hf) return checkpointBytes(await model.toCheckpoint(), p.tok, spec);
  const extra = hfCheckpointMetadata(p as Prepared & { hf: NonNullable<Prepared['hf']> }, spec);
  if (!p.lora) return saveCheckpoint({ ...(await model.toCheckpoint()), extraMetadata: extra });
  return saveLoraCheckpoint({
    config: p.config,
    settings: p.lora.layout.settings,
    baseModel: p.hf.base.name,
    lora: await model.model.getLora(),
    step: model.step,
    optimizer: await model.getOptimizerState(),
    extraMetadata: extra,
  });
}

/** Whether a checkpoint's stored spec was an SFT run on chosen labels. */
function labelledRun(specJson: string | undefined): boolean {
  try {
    return !!(specJson && (JSON.parse(specJson) as { sftLabelled?: boolean }).sftLabelled);
  } catch {
    return false;
  }
}

export function checkpointBytes(ck: Checkpoint, tok: Tokenizer, spec: ResolvedSpec): Uint8Array {
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

/** Coverage of the rows (docs/method.md §11) as metrics at the first step, and one log line that says it in words. */
export function reportCoverage(host: TrainHost, step: number, rows: readonly Pick<EncodedRow, 'coverage'>[]): Record<string, number> | undefined {
  const m = coverageMetrics(rows);
  if (!Object.keys(m).length) return undefined;
  const pct = (k: string) => (m[k] === undefined ? 'n/a' : `${(m[k] * 100).toFixed(1)}%`);
  host.log(
    `what the model sees (${rows.length} rows): ${pct('coverage_system')} of system-prompt tokens, ${pct('coverage_turns')} of history turns, ` +
      `${pct('coverage_initial_state')} of the initial state, the newest turn whole in ${pct('coverage_last_turn')} of rows with history` +
      (m.coverage_target === undefined ? '' : `, ${pct('coverage_target')} of target tokens`),
  );
  host.metric(step, m);
  return m;
}
