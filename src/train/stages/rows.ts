// The rows a stage trains and evaluates on: packed text (CPT), weighted turn samples (SFT), rows
// from chosen labels, the eval rows across domains and their batches, and the unigram baseline
// of a row set.
import { knowledgeText } from '../../envs/index.ts';
import { categorizeDataset, type TrajectoryMask } from '../../core/masking/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../../core/schema/types.ts';
import { BUILTIN_TEMPLATES, templateForSample, trajectoryParts, type PromptTemplate, type TemplateDistribution } from '../../core/templates/index.ts';
import type { TextPart } from '../../core/tokenizer/index.ts';
import { expandTurns, interleaveDomains, interleaveSamples, rlPool, type TurnSample } from '../../core/turns/index.ts';
import type { Stage } from '../../core/trainSpec.ts';
import { encodeSftSample, encodeSftSamples, encodeTrajectoryRows, makeBatch, packCorpus, type EncodedRow, type TokenBatch } from '../data.ts';
import { UserFacingError } from '../context.ts';
import type { SftLabel } from '../rejection.ts';
import type { Prepared, TrainHost } from './common.ts';

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
  /** SFT: one turn sample per row, or trajectory rows (TrainSpec.rows). */
  rowKind: 'turn' | 'trajectory' = 'turn',
  /** SFT: rows laid out as a generator leaving this many tokens for its answer sees them (TrainSpec.answerRoom). */
  answerRoom?: number,
): EncodedRow[] {
  if (stage === 'cpt') {
    const texts: (string | TextPart[])[] = [];
    if (withKnowledge)
      for (const d of new Set(trajectories.map((t) => t.domain))) if ((DOMAINS as readonly string[]).includes(d)) texts.push(knowledgeText(d as KnownDomain));
    for (const t of trajectories) texts.push(trajectoryParts(templateForSample(templates, { trajectoryId: t.id, turnIndex: 0 }, seed, templateSet), t));
    return packCorpus(p.tok, texts, p.T);
  }
  const samples = expandTurns(trajectories);
  return (rowKind === 'trajectory' ? encodeTrajectoryRows : encodeSftSamples)(
    p.tok,
    samples,
    (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1,
    templates,
    { maxTokens: p.T + 1, seed, templates: templateSet, ...(answerRoom !== undefined && { answerRoom }) },
  );
}

/** Eval rows with the domain of each. */
export interface EvalRows {
  rows: EncodedRow[];
  domains: string[];
}

/**
 * A stage's eval rows across domains (interleaveDomains: one row of each domain in turn, domains
 * by name), so the first rows, those the eval batches take, cover every domain. SFT: each
 * domain's turn samples in a seeded order; CPT: each domain's trajectories in a seeded order,
 * packed apart so that no row mixes two domains.
 */
export function evalRows(
  stage: Stage,
  p: Pick<Prepared, 'tok' | 'T'>,
  trajectories: Trajectory[],
  templates: TemplateDistribution,
  seed: number,
  templateSet: Readonly<Record<string, PromptTemplate>> = BUILTIN_TEMPLATES,
  masks: ReadonlyMap<string, TrajectoryMask> = new Map(stage === 'cpt' ? [] : categorizeDataset(trajectories).map((m) => [m.id, m])),
): EvalRows {
  if (stage !== 'cpt') {
    const samples = interleaveSamples(expandTurns(trajectories), seed);
    const rows = encodeSftSamples(p.tok, samples, (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1, templates, {
      maxTokens: p.T + 1,
      seed,
      templates: templateSet,
    });
    return { rows, domains: samples.map((s) => s.domain) };
  }
  const byDomain = new Map<string, Trajectory[]>();
  for (const t of interleaveDomains(
    trajectories,
    (x) => x.domain,
    (x) => x.id,
    seed,
  )) {
    const list = byDomain.get(t.domain);
    if (list) list.push(t);
    else byDomain.set(t.domain, [t]);
  }
  const tagged = [...byDomain].flatMap(([domain, ts]) => stageRows('cpt', p, ts, templates, seed, false, templateSet).map((row) => ({ row, domain })));
  const mixed = interleaveDomains(tagged, (x) => x.domain);
  return { rows: mixed.map((x) => x.row), domains: mixed.map((x) => x.domain) };
}

/** An eval batch and the domain of each of its rows. */
export interface EvalBatch {
  batch: TokenBatch;
  domains: string[];
}

/** Up to `count` batches of `size` eval rows, from the first rows on (wrapping round when there are fewer). */
export function evalBatchesOf(set: EvalRows, count: number, size: number, T: number, pad: number): EvalBatch[] {
  const n = set.rows.length;
  if (n === 0) return [];
  return Array.from({ length: Math.min(count, Math.ceil(n / size)) }, (_, k) => {
    const idx = Array.from({ length: size }, (_, j) => (k * size + j) % n);
    return {
      batch: makeBatch(
        idx.map((i) => set.rows[i]),
        T,
        pad,
      ),
      domains: idx.map((i) => set.domains[i]),
    };
  });
}

/**
 * The eval turns an evaluation generates predictions for (SFT's judged samples, RL's held-out
 * turns): one per trajectory of the eval split (rlPool), one domain after another
 * (interleaveSamples), the first n; so n turns cover min(n, domains) domains.
 */
export function judgedEvalSamples(p: Pick<Prepared, 'train' | 'eval'>, seed: number, n: number): TurnSample[] {
  return interleaveSamples(rlPool(p.eval.length ? p.eval : p.train, seed + 1), seed + 1).slice(0, n);
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
  /** Rows laid out as a generator leaving this many tokens for its answer sees them (TrainSpec.answerRoom), as stageRows's. */
  answerRoom?: number,
): EncodedRow[] {
  // The trace sits between the context and the tag: it has its own (lower) weight.
  return labelled.map(({ sample, reasoning, weight }) =>
    encodeSftSample(p.tok, sample, templateForSample(templates, sample, seed, templateSet), weight ?? 1, {
      maxTokens: p.T + 1,
      reasoning,
      reasoningWeight,
      ...(answerRoom !== undefined && { answerRoom }),
    }),
  );
}

/**
 * The labels a run trains on: only those of train-split trajectories (a label of a held-out turn
 * would leak it), each at its turn's mask weight in this run unless the label carries its own.
 */
export function trainLabels(
  labels: SftLabel[],
  p: Pick<Prepared, 'train'>,
  masks: ReadonlyMap<string, TrajectoryMask>,
  host?: Pick<TrainHost, 'log'>,
): SftLabel[] {
  const train = new Set(p.train.map((t) => t.id));
  const kept = labels.filter((l) => train.has(l.sample.trajectoryId));
  if (kept.length < labels.length)
    host?.log(
      `labels: ${labels.length - kept.length} of ${labels.length} belong to eval-split trajectories and are left out (made with another seed or eval share?)`,
    );
  if (kept.length === 0) throw new UserFacingError(`none of the ${labels.length} labels belongs to a train-split trajectory of this run`);
  return kept.map((l) => ({ ...l, weight: l.weight ?? masks.get(l.sample.trajectoryId)?.turns[l.sample.turnIndex]?.weight ?? 1 }));
}
