// The records the app stores (src/storage/db.ts keeps them in IndexedDB): datasets, template
// versions, cached tokenizers, training runs with their checkpoints and metrics, benches with their
// results, prompt optimizations. Plain data, so the worker, the CLI, storage and the app all read
// the same types; how they are kept (stores, keys, indexes, upgrades) is storage's.
import type { BackendRef, EndpointRef, CheckpointRef as ModelCheckpointRef } from './backendRef.ts';
import type { Trajectory } from './schema/types.ts';
import type { PromptTemplate } from './templates/index.ts';
import type { TokenizerJSON } from './tokenizer/index.ts';
import type { HfFolderRef, TrainSpec } from './trainSpec.ts';
import type { AwbJudgedRecord, AwbPredictionRecord, AwbSampleRecord } from './schema/agentworldbench.ts';
import type { LoopConfig, LoopState } from './optimize/loop.ts';

/** What the dataset list shows, without loading any trajectory. */
export interface DatasetMeta {
  id: string;
  name: string;
  createdAt: number;
  /** 'builtin' for the default dataset, 'import' for files a user added, 'playground' for sessions saved in the Playground. */
  origin: 'builtin' | 'import' | 'playground';
  /** Format the importer used (detected or chosen), per file. */
  formats: string[];
  files: string[];
  trajectories: number;
  turns: number;
  domains: string[];
  /** Lines that failed to import (the dataset holds only what imported cleanly). */
  errorCount: number;
  chunks: number;
}

/** Trajectories are stored in chunks so a large dataset is not one huge structured-clone value. */
export interface DatasetChunk {
  datasetId: string;
  index: number;
  trajectories: Trajectory[];
}

/** One template in the lineage v0…vN (docs/method.md §9): a parent it was derived from and why. */
export interface TemplateVersion {
  version: string;
  parent: string | null;
  note: string;
  createdAt: number;
  builtin: boolean;
  template: PromptTemplate;
}

export interface CachedTokenizer {
  datasetId: string;
  vocabSize: number;
  createdAt: number;
  json: TokenizerJSON;
}

export type RunState = 'queued' | 'running' | 'paused' | 'stopping' | 'stopped' | 'done' | 'failed';
export type CheckpointTag = 'last' | 'best';

/** A run's pointer to one stored checkpoint. */
export interface CheckpointRef {
  key: string;
  step: number;
  size: number;
  createdAt: number;
  evalLoss?: number;
}

/** One training run (one stage): what it was asked to do, where it is, its checkpoints. */
export interface RunRecord {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  stage: TrainSpec['stage'];
  /** The spec as given (defaults are applied by the pipeline; the checkpoint records them). */
  spec: TrainSpec;
  data: { datasetId: string | null; name: string; trajectories: number };
  /** The stored checkpoint this run started from (an earlier stage), if any. */
  from: { runId: string; runName: string; tag: CheckpointTag; step: number; stage: string; key: string } | null;
  state: RunState;
  /** The user-facing message of a failed run. */
  error?: string;
  /** The last step that reported metrics. */
  step: number;
  checkpoints: Partial<Record<CheckpointTag, CheckpointRef>>;
  /** Steps at which the run was resumed from its 'last' checkpoint (the chart marks them). */
  resumes: number[];
  /**
   * A run that started from a Hugging Face folder: which one (its files are not stored, so a
   * resume or a merged export asks for the same folder again), and what it trains of it.
   */
  hf?: { folder: HfFolderRef; tuning: 'full' | 'lora'; memoryGiB: number };
  /**
   * A stage of a recipe run (src/train/recipe.ts): its data was generated in the worker, trajectory
   * i being `generateTrajectory(domain, dataSeed, i)` for i < data.trajectories, so a resume
   * regenerates the same trajectories instead of reading a dataset. `tasks`: task-play
   * trajectories of these families follow them (`taskPlayTrajectory(domain, families, dataSeed, i)`
   * for i < count; count is set once the data is generated).
   */
  recipe?: { name: string; domain: string; dataSeed: number; stage: number; stages: number; tasks?: { families: string[]; count?: number } };
}

export interface StoredCheckpoint {
  key: string;
  runId: string;
  step: number;
  createdAt: number;
  /** safetensors bytes: weights, Adam state, step, tokenizer and stage in the metadata. */
  bytes: ArrayBuffer;
}

export interface RunMetric {
  runId: string;
  step: number;
  values: Record<string, number>;
}

/** A backend a benchmark runs (no secret: an endpoint's API key is never stored). */
/**
 * A backend of a benchmark: a model (src/core/backendRef.ts; a folder is stored as what it was,
 * never its files: File handles are not stored, so a resumed bench needs the same folder picked
 * again, found by `folderId`), or the predictions of an imported file.
 */
export type BenchBackendRef = {
  /** Unique within the bench; keys its results. */
  id: string;
  /** Shown in tables; the `model` field of its records. */
  name: string;
} & (BackendRef | { kind: 'imported' });

/** A judge of a benchmark (no secret). */
export interface BenchJudgeRef {
  /** Unique within the bench; keys its judged records (the records' `judge` field). */
  id: string;
  kind: 'local' | 'endpoint' | 'imported';
  endpoint?: { baseUrl: string; model: string };
}

export interface BenchGeneration {
  /** Output budget of a model; absent: a quarter of a checkpoint's context, 32768 for an endpoint. */
  maxTokens?: number;
  /** Absent: 0 (greedy) for a checkpoint, 0.6 for an endpoint. */
  temperature?: number;
  topP?: number;
  seed?: number;
}

/** Why a backend could not run: an endpoint blocked by CORS, down or refusing the key, a checkpoint without its tokenizer or template, no WebGPU. */
export type BackendProblemKind = 'cors' | 'unreachable' | 'auth' | 'endpoint' | 'checkpoint' | 'no-webgpu' | 'other';

/** A backend's failure in a bench run: the other backends went on; a resume tries it again. */
export interface BenchBackendProblem {
  kind: BackendProblemKind;
  message: string;
}

/** One benchmark: held-out turns × backends × judges, run in the worker (or read from a file). */
export interface BenchRecord {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  /** 'run': infer → judge → score in the worker; 'import': a judged file read in the page. */
  origin: 'run' | 'import';
  state: RunState;
  error?: string;
  /** Where the samples come from (a run) or the file names (an import). */
  data: { datasetId: string | null; name: string; perDomain: number | null; evalFraction: number; seed: number; domains: string[] };
  /** The held-out turns, fixed when the run first starts (empty until then, and for an import). */
  samples: AwbSampleRecord[];
  backends: BenchBackendRef[];
  judges: BenchJudgeRef[];
  generation: BenchGeneration;
  /** Work units (a prediction or a judgement) done of the total, for the list. */
  progress: { done: number; total: number };
  /** Backends that could not run in the last attempt, by backend id (absent: none failed). */
  backendProblems?: Record<string, BenchBackendProblem>;
}

/** One sample of one backend: its prediction, and its judged record by judge id. */
export interface BenchResult {
  benchId: string;
  backend: string;
  /** The sample's position in BenchRecord.samples (an import: in the file). */
  index: number;
  prediction: AwbPredictionRecord;
  judged: Record<string, AwbJudgedRecord>;
}

/** The optimizer of a prompt optimization (no secret: an endpoint's API key is never stored). */
export type OptimizerRef = { kind: 'offline' } | { kind: 'endpoint'; endpoint: { baseUrl: string; model: string } };

/**
 * One prompt optimization (issue 16): a starting template version improved round by round on a
 * dataset's dev split, run in the worker ('optimize' job, src/jobs/optimize.ts). `loop` is the
 * loop's own state, stored after every evaluation, so a reload resumes without redoing finished
 * rounds or scored candidates.
 */
export interface OptimizationRecord {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  state: RunState;
  error?: string;
  /** The version it started from, and its template (the loop edits `template.text`). */
  start: { version: string; template: PromptTemplate };
  data: { datasetId: string; name: string; domains: string[]; evalFraction: number; seed: number; devPerDomain: number; testPerDomain: number };
  /** The simulated model (the Bench's backend kinds, not imported). */
  backend: BenchBackendRef;
  judge: BenchJudgeRef;
  optimizer: OptimizerRef;
  generation: BenchGeneration;
  /** Rounds, candidates, margin, level, seed and budget; the split sizes are filled in when the run first starts. */
  config: Omit<LoopConfig, 'devSize' | 'testSize'>;
  /** The loop's state (null until the starting template has been scored once). */
  loop: LoopState | null;
  /** Candidates saved as template versions: candidate id → version name. */
  promoted?: Record<string, string>;
}

/**
 * One Sim RL experiment (docs/method.md §13): four agents trained and measured on held-out tasks,
 * run in the worker ('simrl' job, src/jobs/simrl.ts). `experiment` is the experiment's own
 * resumable state (AgentExperimentState of src/train/agent/experiment.ts: plain data, its
 * checkpoints as bytes), stored after every evaluation, so a reload resumes from the last one.
 */
export interface ExperimentRecord<S = unknown> {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  state: RunState;
  error?: string;
  /** The world model the model arms simulate with (null: no arm needs one). */
  world: { kind: 'copy-last' } | { kind: 'checkpoint'; checkpoint: ModelCheckpointRef } | { kind: 'endpoint'; endpoint: EndpointRef } | null;
  /** Most tokens of one simulated observation. */
  worldMaxTokens: number;
  /**
   * A Hugging Face policy: the folder picked (its fingerprint; the page does not keep its files
   * after a reload, so going on asks for the same folder again) and the memory the run may take.
   */
  policy?: { folder: HfFolderRef; memoryGiB: number };
  experiment: S;
}
