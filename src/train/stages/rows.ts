// The rows a stage trains and evaluates on: packed text (CPT), weighted turn samples (SFT), rows
// from chosen labels, and the unigram baseline of a row set.
import { knowledgeText } from '../../core/envs/index.ts';
import { categorizeDataset, type TrajectoryMask } from '../../core/masking/index.ts';
import { DOMAINS, type KnownDomain, type Trajectory } from '../../core/schema/types.ts';
import { BUILTIN_TEMPLATES, templateForSample, trajectoryParts, type PromptTemplate, type TemplateDistribution } from '../../core/templates/index.ts';
import type { TextPart } from '../../core/tokenizer/index.ts';
import { expandTurns, type TurnSample } from '../../core/turns/index.ts';
import type { Stage } from '../spec.ts';
import { encodeSftSample, encodeSftSamples, packCorpus, type EncodedRow } from '../data.ts';
import { UserFacingError } from '../host.ts';
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
): EncodedRow[] {
  if (stage === 'cpt') {
    const texts: (string | TextPart[])[] = [];
    if (withKnowledge) for (const d of new Set(trajectories.map((t) => t.domain))) if ((DOMAINS as readonly string[]).includes(d)) texts.push(knowledgeText(d as KnownDomain));
    for (const t of trajectories) texts.push(trajectoryParts(templateForSample(templates, { trajectoryId: t.id, turnIndex: 0 }, seed, templateSet), t));
    return packCorpus(p.tok, texts, p.T);
  }
  const samples = expandTurns(trajectories);
  return encodeSftSamples(p.tok, samples, (s) => masks.get(s.trajectoryId)?.turns[s.turnIndex]?.weight ?? 1, templates, { maxTokens: p.T + 1, seed, templates: templateSet });
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
  // The trace sits between the context and the tag: it has its own (lower) weight.
  return labelled.map(({ sample, reasoning, weight }) => encodeSftSample(p.tok, sample, templateForSample(templates, sample, seed, templateSet), weight ?? 1, { maxTokens: p.T + 1, reasoning, reasoningWeight }));
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
