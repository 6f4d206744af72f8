// The spec of one training stage: what a run was asked to do. Plain data, shared by the pipeline
// that runs it (pipeline.ts), the job that starts it (jobs.ts), the stored run record
// (src/storage/db.ts) and the Train view's form. It imports only core and the model's preset
// names, so storage can keep it without importing the pipeline (see .dependency-cruiser.cjs).
import type { MaskConfig } from './masking/index.ts';
import type { RewardKind, RewardMix } from './judge/reward.ts';
import type { PromptTemplate, TemplateDistribution } from './templates/index.ts';
import type { PresetName } from './model/config.ts';

export type Stage = 'cpt' | 'sft' | 'rl';

/** Who judges: the local rubric or an LLM judge behind an OpenAI-compatible endpoint. */
export type JudgeKind = 'local' | 'endpoint';

/** The shortest sequence a run may train on: a few tokens of prompt and of observation. */
export const MIN_SEQUENCE_TOKENS = 8;
/** An RL response must leave at least this many tokens of the sequence for its prompt. */
export const MIN_PROMPT_TOKENS = 8;
/** Where the schedule ends when only the peak learning rate is given: a tenth of it, the usual end of a cosine decay. */
export const LR_MIN_FRACTION = 1 / 10;

/**
 * Rejection sampling keeps a candidate whose judge mean (on the 1–5 scale) reaches this unless a
 * run sets its own: a 4 is "right but for details" on the average dimension.
 */
export const DEFAULT_KEEP_THRESHOLD = 4;

/** Rejection sampling inside an SFT run (the app's Train view): where the labels come from. */
export interface LabelSettings {
  /** 'local': the run's starting checkpoint writes the candidates; 'endpoint': a served model. */
  teacher: 'local' | 'endpoint';
  teacherEndpoint?: { baseUrl: string; model: string };
  /** Who scores the candidates. Default local. */
  judge?: JudgeKind;
  judgeEndpoint?: { baseUrl: string; model: string };
  candidates?: number;
  threshold?: number;
  keep?: 'all' | 'best';
  /** Train-split turns to label (a seeded spread). Default: every one. */
  samples?: number;
  temperature?: number;
  maxTokens?: number;
}

export interface RlSettings {
  /** Samples per prompt (G). Default 4. */
  groupSize?: number;
  /** Prompts (groups) per rollout batch; each is one optimizer step. Default 2. */
  promptsPerStep?: number;
  /** Longest response. Default 32. */
  maxNewTokens?: number;
  /** Sampling temperature of the rollout. Default 1. */
  temperature?: number;
  topK?: number;
  epsLow?: number;
  epsHigh?: number;
  rewardMix?: RewardMix;
  /** The reward (docs/method.md §7 ablation): rubric + verifier (default), binary reference comparison, binary Turing test. */
  reward?: RewardKind;
  /** Who judges: the local rubric (default) or an LLM judge behind an endpoint. */
  rewardJudge?: JudgeKind;
  /** The endpoint judge (its API key is never stored: pass it to runTraining). */
  judgeEndpoint?: { baseUrl: string; model: string };
  /** Held-out eval turns generated and judged at each evaluation. Default 8. */
  evalSamples?: number;
  /** Update passes process each group's prompt once, its K/V shared by the G responses (docs/method.md §10). Default true; false: G full rows. */
  sharedPrefix?: boolean;
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
  /** Template distribution of the evaluation rows and judged predictions (default DEFAULT_STAGE_TEMPLATES.eval). */
  evalTemplates?: TemplateDistribution;
  /** Template versions beyond the built-in ones that the distribution may name (the Prompts view's). */
  templateSet?: Record<string, PromptTemplate>;
  rl?: RlSettings;
  /** SFT: train on labels chosen by rejection sampling instead of the reference observations. */
  labels?: LabelSettings;
  /**
   * SFT rows (docs/method.md): 'turn' (default), one turn sample per row, only its target carries
   * loss; 'trajectory', a row also trains every history observation it shows whole, and rows are
   * chosen so each observation is trained once (src/train/data.ts encodeTrajectoryRows). Eval rows
   * are turn rows either way, so eval losses compare across the two.
   */
  rows?: 'turn' | 'trajectory';
  /**
   * SFT: lay each row out as a generator that leaves this many tokens for its answer sees the
   * sample (src/core/templates/fit.ts FitOptions.answerRoom; `lwm infer`, the bench and a Sim RL
   * world leave a quarter of the context by default). Without it a short target follows a longer
   * prompt than any generator gives, and a small model can learn to need that length
   * (docs/method.md §5). A whole number from 1 to half the row length.
   */
  answerRoom?: number;
  /** The loss mask's thresholds and ratios (SFT); missing keys take the defaults (docs/masking.md). */
  mask?: Partial<MaskConfig>;
  /**
   * LoRA on a pretrained model (the run starts from a Hugging Face folder): rank, alpha (default
   * 2·rank) and the projections adapted (default q, k, v, o, gate, up, down); base weights frozen,
   * held on the GPU in f32 or (baseWeights 'f16') in f16, half the memory, f32 accumulation.
   */
  lora?: { rank: number; alpha?: number; targets?: string[]; baseWeights?: 'f32' | 'f16' };
}

/**
 * The Hugging Face folder a run of the app starts from (its files are never stored: the page picks
 * them again after a reload, and this tells the same folder from another).
 */
export interface HfFolderRef {
  /** The picked folder's name (base_model_name_or_path of the adapter). */
  name: string;
  /** Each model file's path inside the folder and its size in bytes. */
  files: { path: string; size: number }[];
  /** SHA-256 of config.json, and of the safetensors headers (tensor names, dtypes, shapes, offsets). */
  config: string;
  weights: string;
}
