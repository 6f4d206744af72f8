// From trajectories to token batches, on the CPU, before anything reaches the GPU.
//
// SFT (docs/method.md §5): each turn sample is rendered with a template drawn from the stage's template
// distribution and tokenised piece by piece; only the target observation (and its closing tag,
// so the model learns to stop) carries loss, weighted by the sample's mask ratio (docs/method.md §4).
//
// When a sample has more tokens than the model's context, the one truncation policy of
// src/core/templates/fit.ts decides what stays (the action, the target's opening, the initial
// state, the newest turns, ...); inference prompts are cut by the same policy.
// CPT (docs/method.md §5): texts are joined with <|bos|>/<|eos|> and cut into context-length windows.
//
// Special ids come only from the template: a sample's text (fields, actions, observations, labels,
// reasoning traces, a CPT text) is encoded as text, so `<|system|>` in an observation is those
// characters (fit.ts's encoding, and packCorpus's).
import { fitPrompt, fitTurn, type FitCoverage } from '../core/templates/fit.ts';
import { templateForSample, type PromptTemplate, type TemplateDistribution } from '../core/templates/index.ts';
import type { TextPart, Tokenizer } from '../core/tokenizer/index.ts';
import type { TurnSample } from '../core/turns/index.ts';
import { keyedUniform } from '../core/random.ts';

/** One training row: `ids` are tokens; `weights[i]` is the loss weight of predicting ids[i]. */
export interface EncodedRow {
  ids: number[];
  weights: number[];
  /** Tokens before the completion (the prompt a generator would be given). */
  promptLength: number;
  /** Oldest history turns dropped by truncation. */
  droppedTurns: number;
  truncated: boolean;
  /** The budget its context was fitted to (SFT rows): a generator with this room plus the opening tag gets the same prompt. */
  contextBudget?: number;
  /** How much of the sample the row shows (SFT rows only). */
  coverage?: FitCoverage;
  trajectoryId?: string;
  turnIndex?: number;
  domain?: string;
}

/** B rows of T positions: predict targets[r·T + t] from inputs[r·T .. r·T + t] (a ModelBatch). */
export interface TokenBatch {
  B: number;
  T: number;
  inputs: Uint32Array;
  targets: Uint32Array;
  weights: Float32Array;
  /** Σ weights: the reported loss is the weighted mean Σ w·ℓ / weightSum. */
  weightSum: number;
  /**
   * The gradient's normaliser: a step minimises Σ w·ℓ / lossNorm. It never depends on the
   * weights, so a token's gradient is proportional to its own mask weight in every batch (an
   * echo token gets 5% of a retrieval token's, at any batch size and category mix).
   */
  lossNorm: number;
}

export interface SftEncodeOptions {
  /** Most tokens a row may have: the model's context length + 1 (inputs and targets overlap). */
  maxTokens: number;
  reasoning?: string;
  /** Loss weight of the reasoning trace's tokens (its tags included); default 0. */
  reasoningWeight?: number;
  /**
   * Trajectory rows: the loss weight of history turn i's observation (and the template text
   * closing it) where the row shows that turn whole; history carries no loss without it.
   */
  historyWeight?: (turn: number) => number;
  /** Fit each row's context as a generator leaving this many tokens for its answer would (FitOptions.answerRoom). */
  answerRoom?: number;
}

/** Encodes a turn sample with a template, cut to `maxTokens` by the truncation policy (fit.ts). */
export function encodeSftSample(tok: Tokenizer, sample: TurnSample, template: PromptTemplate, targetWeight: number, options: SftEncodeOptions): EncodedRow {
  const fitted = fitTurn(tok, template, sample, { budget: options.maxTokens, reasoning: options.reasoning, answerRoom: options.answerRoom });
  const ids: number[] = [];
  const weights: number[] = [];
  for (const s of fitted.segments) {
    const w = s.role === 'target' || s.role === 'close' ? targetWeight : s.role === 'reasoning' ? (options.reasoningWeight ?? 0) : 0;
    const obs = options.historyWeight && s.observation && s.turn !== undefined ? s.observation : null;
    const hw = obs ? options.historyWeight!(s.turn!) : 0;
    s.ids.forEach((id, k) => {
      ids.push(id);
      weights.push(obs && k >= obs.start && k < obs.closeEnd ? hw : w);
    });
  }
  return {
    ids,
    weights,
    promptLength: fitted.contextLength,
    contextBudget: fitted.contextBudget,
    droppedTurns: fitted.droppedTurns,
    truncated: fitted.truncated,
    coverage: fitted.coverage,
    trajectoryId: sample.trajectoryId,
    turnIndex: sample.turnIndex,
    domain: sample.domain,
  };
}

/** Mean coverage of SFT rows, as training metrics: the share of system-prompt tokens, of history turns and of the initial state the model saw. */
export function coverageMetrics(rows: readonly Pick<EncodedRow, 'coverage'>[]): Record<string, number> {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);
  const covs = rows.flatMap((r) => (r.coverage ? [r.coverage] : []));
  if (!covs.length) return {};
  const out: Record<string, number | undefined> = {
    coverage_system: mean(covs.map((c) => c.system)),
    coverage_turns: mean(covs.flatMap((c) => (c.turns === null ? [] : [c.turns]))),
    coverage_initial_state: mean(covs.flatMap((c) => (c.initialState === null ? [] : [c.initialState]))),
    coverage_last_turn: mean(covs.flatMap((c) => (c.historyTurns ? [c.keptTurns > 0 ? 1 : 0] : []))),
    coverage_target: mean(covs.flatMap((c) => (c.target === null ? [] : [c.target]))),
  };
  return Object.fromEntries(Object.entries(out).filter((e): e is [string, number] => e[1] !== undefined));
}

/** Options of a whole row set: the encoding's, the seed of the template draw and the template versions it may name. */
export type SftRowsOptions = SftEncodeOptions & { seed?: number; templates?: Readonly<Record<string, PromptTemplate>> };

/** Encodes SFT samples, each with a template drawn (reproducibly) from `distribution`. */
export function encodeSftSamples(
  tok: Tokenizer,
  samples: TurnSample[],
  weightOf: (s: TurnSample) => number,
  distribution: TemplateDistribution,
  options: SftRowsOptions,
): EncodedRow[] {
  return samples.map((s) => encodeSftSample(tok, s, templateForSample(distribution, s, options.seed ?? 0, options.templates), weightOf(s), options));
}

/**
 * Trajectory rows (SFT `rows: 'trajectory'`, docs/method.md): one row trains the target of a turn
 * sample and the observation of every history turn it shows whole, each at its own turn's mask
 * weight, so a row of a few hundred tokens trains many observations instead of one. Rows are
 * chosen from each trajectory's last turn back: the next row's target is the newest turn the row
 * before did not show whole, so every observation is trained once, each seeing the history
 * before it that the truncation policy keeps (the same context its own turn sample would give,
 * or a shorter one where an earlier turn's row was cut). Samples of one trajectory share a
 * template (the last turn's draw), so history and target are laid out alike.
 */
export function encodeTrajectoryRows(
  tok: Tokenizer,
  samples: TurnSample[],
  weightOf: (s: TurnSample) => number,
  distribution: TemplateDistribution,
  options: SftRowsOptions,
): EncodedRow[] {
  const byTrajectory = new Map<string, Map<number, TurnSample>>();
  for (const s of samples) {
    let turns = byTrajectory.get(s.trajectoryId);
    if (!turns) byTrajectory.set(s.trajectoryId, (turns = new Map()));
    turns.set(s.turnIndex, s);
  }
  const rows: EncodedRow[] = [];
  for (const turns of byTrajectory.values()) {
    const order = [...turns.keys()].sort((a, b) => a - b);
    const last = turns.get(order[order.length - 1])!;
    const template = templateForSample(distribution, last, options.seed ?? 0, options.templates);
    // A history turn without a sample of its own (left out of the set) carries no loss.
    const historyWeight = (i: number) => {
      const h = turns.get(i);
      return h ? weightOf(h) : 0;
    };
    const picked: EncodedRow[] = [];
    for (let k = order.length - 1; k >= 0; ) {
      const s = turns.get(order[k])!;
      const row = encodeSftSample(tok, s, template, weightOf(s), { ...options, historyWeight });
      picked.push(row);
      // The oldest turn shown whole is row.droppedTurns; the next row ends before it.
      const next = Math.min(s.turnIndex, row.droppedTurns) - 1;
      while (k >= 0 && order[k] > next) k--;
    }
    rows.push(...picked.reverse());
  }
  return rows;
}

/**
 * CPT: texts joined with bos/eos into one stream, cut into windows of T + 1 tokens (stride T). A
 * string is text (no special ids); a rendered trajectory comes as its parts (trajectoryParts), so
 * only the template's own text gives special ids.
 */
export function packCorpus(tok: Tokenizer, texts: Iterable<string | readonly TextPart[]>, T: number): EncodedRow[] {
  const stream: number[] = [];
  for (const text of texts) {
    const ids = tok.encodeParts(typeof text === 'string' ? [{ text, data: true }] : text);
    stream.push(tok.special.bos);
    for (const id of ids) stream.push(id);
    stream.push(tok.special.eos);
  }
  const rows: EncodedRow[] = [];
  for (let start = 0; start + 1 < stream.length; start += T) {
    const ids = stream.slice(start, start + T + 1);
    if (ids.length < 2) break;
    rows.push({ ids, weights: ids.map((_, i) => (i === 0 ? 0 : 1)), promptLength: 0, droppedTurns: 0, truncated: false });
  }
  return rows;
}

/** Target tokens (weight > 0) a row contributes to a batch of T positions. */
export function targetTokens(row: EncodedRow, T: number): number {
  let n = 0;
  for (let t = 0; t < Math.min(T, row.ids.length - 1); t++) if (row.weights[t + 1] > 0) n++;
  return n;
}

/**
 * Lays rows out as a batch of B × T, padding short rows with weight-0 pad tokens. `lossNorm`
 * defaults to this batch's target tokens; a sampler passes one value for the whole run.
 */
export function makeBatch(rows: EncodedRow[], T: number, pad: number, lossNorm?: number): TokenBatch {
  const B = rows.length;
  const inputs = new Uint32Array(B * T).fill(pad);
  const targets = new Uint32Array(B * T).fill(pad);
  const weights = new Float32Array(B * T);
  let weightSum = 0;
  rows.forEach((row, r) => {
    const n = Math.min(T, row.ids.length - 1);
    for (let t = 0; t < n; t++) {
      inputs[r * T + t] = row.ids[t];
      targets[r * T + t] = row.ids[t + 1];
      const w = row.weights[t + 1];
      weights[r * T + t] = w;
      weightSum += w;
    }
  });
  return { B, T, inputs, targets, weights, weightSum, lossNorm: lossNorm ?? rows.reduce((n, row) => n + targetTokens(row, T), 0) };
}

/**
 * Endless seeded batches from a row set: each epoch is a fresh permutation (keyed by seed and
 * epoch), so a resumed run that skips to batch k sees exactly the batches it would have seen.
 */
export class BatchSampler {
  constructor(
    private readonly rows: EncodedRow[],
    private readonly batchSize: number,
    private readonly T: number,
    private readonly pad: number,
    private readonly seed = 0,
  ) {
    if (rows.length === 0) throw new Error('no training rows: the dataset gave no samples for this stage');
    this.lossNorm = (batchSize * rows.reduce((n, row) => n + targetTokens(row, T), 0)) / rows.length || 1;
  }

  /**
   * The run's gradient normaliser: the expected number of target tokens in a batch (batch size ×
   * the rows' mean). The same for every batch, so each token's gradient is w / lossNorm whatever
   * rows it was drawn with; with all weights 1 and full rows (CPT) it is B·T, the plain mean.
   */
  readonly lossNorm: number;

  private order(epoch: number): number[] {
    const idx = this.rows.map((_, i) => i);
    return idx.sort((a, b) => keyedUniform(`${epoch}:${a}`, this.seed) - keyedUniform(`${epoch}:${b}`, this.seed) || a - b);
  }

  private cache: { epoch: number; order: number[] } | null = null;

  /** Batch number k (0-based). */
  batch(k: number): TokenBatch {
    const picked: EncodedRow[] = [];
    for (let j = 0; j < this.batchSize; j++) {
      const flat = k * this.batchSize + j;
      const epoch = Math.floor(flat / this.rows.length);
      if (!this.cache || this.cache.epoch !== epoch) this.cache = { epoch, order: this.order(epoch) };
      picked.push(this.rows[this.cache.order[flat % this.rows.length]]);
    }
    return makeBatch(picked, this.T, this.pad, this.lossNorm);
  }
}

/** The prompt a generator is given for a sample: context and the opening target tag within `maxTokens`, cut as training rows are. */
export function encodePrompt(tok: Tokenizer, sample: TurnSample, template: PromptTemplate, maxTokens: number): number[] {
  return fitPrompt(tok, template, sample, maxTokens).ids;
}
