// AgentWorldBench records (docs/method.md §8): one JSON object per turn, the one record shape the importer
// and exporter (formats/agentworldbench.ts) and the benchmark (bench/: predict → judge → score)
// read and write. Sample records carry the trajectory up to the judged turn; predictions add
// `gen`; judged records add the five scores, `total_score`, `failed`, `strengths`, `weaknesses`.
// Extra keys are kept as they are, so a file passes through predict → judge → score without
// losing anything its producer wrote.

/** A record as a file may hold it: the importer reads records without `task` too. */
export interface AwbRecord {
  /** The domain, possibly prefixed (`agentworldbench/terminal`); the scorer reads its last part. */
  task?: string;
  id: string | number;
  /** Actions of turns 1 … turn_idx (the last one is the current action). */
  prompt: string[];
  /** Observations of turns 1 … turn_idx (the last one is the reference). */
  response: string[];
  current_prompt?: string;
  system_str?: string;
  /** 1-based. */
  turn_idx: number;
  total_turns?: number;
  [key: string]: unknown;
}

export interface AwbSampleRecord extends AwbRecord {
  /** The benchmark needs the domain of every record it predicts, judges and scores. */
  task: string;
}

export interface AwbPredictionRecord extends AwbSampleRecord {
  /** The model's raw output; the prediction is extracted from it at judging time. */
  gen: string;
}

export interface AwbJudgedRecord extends AwbPredictionRecord {
  /** 1–5; 0 (the public scorer's invalid mark), null or absent: no usable score. */
  format?: number | null;
  factuality?: number | null;
  consistency?: number | null;
  realism?: number | null;
  quality?: number | null;
  /** Mean of the valid scores (1–5); 0, null or absent when there is none. */
  total_score?: number | null;
  /**
   * We write booleans; the public scorer writes 1.0 / 0.0. A record is valid only when this is
   * false or 0: a missing `failed` counts as failed, as the public scorer reads it.
   */
  failed?: boolean | number | null;
  strengths?: string[];
  weaknesses?: string[];
}
