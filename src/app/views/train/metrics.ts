// What each training metric means, for the latest-values table (docs/training.md has the long form).
import { BUILTIN_TEMPLATES, DEFAULT_STAGE_TEMPLATES, type TemplateDistribution, type TrainingStage } from '../../../core/templates/index.ts';
import { parseDomainMetric } from '../../../train/domainMetrics.ts';
import type { TrainProgress } from '../../../jobs/jobs.ts';
import type { RunRecord } from '../../../core/records.ts';
import { recipeTitle } from './form.ts';
export const METRIC_HELP: Record<string, string> = {
  loss: 'Training loss on this step’s batch (RL: the negated GSPO objective)',
  eval_loss: 'Loss on the held-out eval split (lower is better)',
  unigram_loss: 'Loss of a context-free model that knows only token frequencies: the baseline to beat',
  lr: 'Learning rate of this step (warmup, then cosine decay)',
  grad_norm: 'Norm of the gradient before clipping',
  tokens_per_s: 'Tokens processed per second on this step',
  eval_judge_mean: 'Mean local-judge total of generated eval predictions',
  reward: 'Mean reward of the rollouts (rubric: 0.9 × judge + 0.1 × verifier, 0–25; binary rewards: the share of samples that won, 0–1)',
  reward_failed: 'Rollout samples whose judgement failed (left out of their group, advantage 0)',
  verifier_pass: 'Share of rollout samples the rule verifier passed',
  eval_reward: 'Held-out reward: rubric + verifier on greedy predictions for eval-split turns, whatever the training reward; picks the best checkpoint',
  eval_verifier_pass: 'Share of held-out predictions the rule verifier passed',
  eval_failed: 'Held-out judgements that failed (left out of the means)',
  ratio_std: 'Standard deviation of the sequence importance ratios s_i in the rollout batch',
  ratio_min: 'Smallest sequence importance ratio s_i in the rollout batch',
  ratio_max: 'Largest sequence importance ratio s_i in the rollout batch',
  labels_kept: 'Rejection sampling: candidates kept as SFT labels',
  labels_rejected: 'Rejection sampling: candidates judged below the threshold',
  labels_judge_failed: 'Rejection sampling: candidates whose judgement failed (neither kept nor rejected)',
  labels_retention: 'Rejection sampling: kept over judged candidates',
  reward_judge: 'Judge part of the reward (five rubric dimensions, 5–25)',
  reward_verifier: 'Rule-verifier part of the reward (0 or 25)',
  clip_fraction: 'Share of sequences whose importance ratio was clipped',
  mean_ratio: 'Mean sequence-level importance ratio between the current and the old policy',
  response_length: 'Mean response length in tokens',
  share_rollout: 'Share of step time spent generating (decode)',
  share_prefill: 'Share of step time spent prefilling prompts',
  share_judge: 'Share of step time spent judging',
  share_update: 'Share of step time spent in the GSPO update',
  coverage_system: 'Share of system-prompt tokens the model saw, averaged over training rows (the rest was cut to fit the context)',
  coverage_turns: 'Share of earlier turns the model saw, averaged over rows with history',
  coverage_initial_state: 'Share of the initial state the model saw, averaged over rows that have one',
  coverage_last_turn: 'Share of rows with history whose newest earlier turn the model saw whole',
  coverage_target: 'Share of target-observation tokens kept in training rows',
};

/** The coverage metrics in the order the run panel states them. */
export const COVERAGE_METRICS = ['coverage_initial_state', 'coverage_last_turn', 'coverage_turns', 'coverage_system', 'coverage_target'] as const;

/** One sentence on how much of each sample the model sees, from the coverage metrics; null before they arrive. */
export function coverageSummary(values: Record<string, number>): string | null {
  // Whole percents, but a share under 10% keeps a decimal so a sliver does not read as nothing.
  const pct = (k: string) => (values[k] === undefined ? null : `${values[k] < 0.1 ? (values[k] * 100).toFixed(1) : Math.round(values[k] * 100)}%`);
  if (pct('coverage_system') === null) return null;
  const parts = [
    pct('coverage_initial_state') && `${pct('coverage_initial_state')} of the initial state`,
    pct('coverage_last_turn') && `the newest turn whole in ${pct('coverage_last_turn')} of rows`,
    pct('coverage_turns') && `${pct('coverage_turns')} of earlier turns`,
    `${pct('coverage_system')} of the system prompt`,
  ].filter(Boolean);
  return `The model sees ${parts.join(', ')}.`;
}

/** Display order: the headline numbers first, then the rest alphabetically. */
const ORDER = [
  'loss',
  'eval_loss',
  'unigram_loss',
  'reward',
  'reward_judge',
  'reward_verifier',
  'eval_reward',
  'eval_verifier_pass',
  'clip_fraction',
  'mean_ratio',
  'ratio_std',
  'ratio_min',
  'ratio_max',
  'response_length',
  'lr',
  'grad_norm',
  'tokens_per_s',
];

export function metricOrder(a: string, b: string): number {
  const ia = ORDER.indexOf(a);
  const ib = ORDER.indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function formatMetric(name: string, v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (
    name.startsWith('share_') ||
    name.startsWith('coverage_') ||
    name.startsWith('labels_retention') ||
    name === 'clip_fraction' ||
    name.endsWith('verifier_pass')
  )
    return `${(v * 100).toFixed(1)}%`;
  if (name.startsWith('labels_') || name.endsWith('_failed')) return Math.round(v).toLocaleString('en-US');
  if (name === 'lr') return v.toExponential(2);
  if (name === 'tokens_per_s') return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
  if (name === 'mean_ratio' || name.startsWith('ratio_')) return v.toFixed(5);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(4);
}

/** A metric's latest value and the step it came at. */
export interface LatestMetric {
  name: string;
  value: number;
  step: number;
}

/** The latest values without the per-domain figures (`eval_loss/web`), which have their own table. */
export function overallMetrics(latest: readonly LatestMetric[]): LatestMetric[] {
  return latest.filter((m) => !parseDomainMetric(m.name));
}

/**
 * The latest evaluation by domain, from the per-domain figures (`<metric>/<domain>`): one row per
 * domain in name order, with the step of its latest figure; a column per figure, in display order.
 */
export function domainEvalTable(latest: readonly LatestMetric[]): {
  metrics: string[];
  rows: { domain: string; step: number; values: Record<string, number> }[];
} {
  const rows = new Map<string, { domain: string; step: number; values: Record<string, number> }>();
  const metrics = new Set<string>();
  for (const m of latest) {
    const k = parseDomainMetric(m.name);
    if (!k) continue;
    metrics.add(k.metric);
    let row = rows.get(k.domain);
    if (!row) rows.set(k.domain, (row = { domain: k.domain, step: m.step, values: {} }));
    row.values[k.metric] = m.value;
    row.step = Math.max(row.step, m.step);
  }
  return { metrics: [...metrics].sort(metricOrder), rows: [...rows.values()].sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)) };
}

/**
 * Rejection-sampling retention from a run's label metrics, as the method reports it: overall,
 * then per domain ("7,094 of 10,250 kept, 69.2%"), judge failures apart. Empty without labels.
 */
export function retentionLines(values: Record<string, number>): string[] {
  if (!('labels_kept' in values)) return [];
  const line = (kept: number, judged: number, failed: number) => {
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    const base = `${n(kept)} of ${n(judged)} kept, ${judged ? ((kept / judged) * 100).toFixed(1) : '0.0'}%`;
    return failed ? `${base} (${n(failed)} judge ${failed === 1 ? 'failure' : 'failures'} left out)` : base;
  };
  const out = [`overall: ${line(values.labels_kept, values.labels_kept + (values.labels_rejected ?? 0), values.labels_judge_failed ?? 0)}`];
  const domains = Object.keys(values)
    .filter((k) => k.startsWith('labels_judged_'))
    .map((k) => k.slice('labels_judged_'.length))
    .sort();
  for (const d of domains) out.push(`${d}: ${line(values[`labels_kept_${d}`] ?? 0, values[`labels_judged_${d}`], values[`labels_judge_failed_${d}`] ?? 0)}`);
  return out;
}

/**
 * The template versions a run renders its samples with: the stage's mix as shares, and each of
 * the user's own versions it names (from the Prompts view, carried in the run's spec) with its
 * description, e.g. a version promoted from a prompt optimization.
 */
export function templateMixText(run: {
  stage: TrainingStage;
  spec: { templates?: TemplateDistribution; templateSet?: Readonly<Record<string, { description?: string }>> };
}): { mix: string; own: string[] } {
  const dist = run.spec.templates ?? DEFAULT_STAGE_TEMPLATES[run.stage];
  const entries = Object.entries(dist).filter(([, w]) => w > 0);
  const total = entries.reduce((n, [, w]) => n + w, 0);
  const mix = entries.map(([v, w]) => `${v} ${Math.round((100 * w) / total)}%`).join(' · ');
  const own = entries.filter(([v]) => !Object.hasOwn(BUILTIN_TEMPLATES, v)).map(([v]) => `${v}: ${run.spec.templateSet?.[v]?.description || 'your version'}`);
  return { mix, own };
}

/** What a live job is doing before its first step, as its progress record says. */
export function preparingText(p: TrainProgress | null): string | null {
  if (p?.kind !== 'generate') return null;
  const n = (x: number) => x.toLocaleString('en-US');
  if (p.done >= p.total) return `Generated the ${p.domain} trajectories; training the tokenizer and building the model…`;
  if (p.unit === 'turns') return `Generating ${p.domain} trajectories for the recipe: ${n(p.done)} of ${n(p.total)} turns…`;
  return `Regenerating the run’s ${p.domain} trajectories: ${n(p.done)} of ${n(p.total)}…`;
}

/** A recipe run's origin in a few words ("Quick recipe · terminal", with its stage when the recipe has several); null for other runs. */
export function recipeRunText(run: Pick<RunRecord, 'recipe'>): string | null {
  const r = run.recipe;
  if (!r) return null;
  const play = r.tasks
    ? ` · task play of ${r.tasks.families.join(', ')}${r.tasks.count !== undefined ? ` (${r.tasks.count.toLocaleString('en-US')})` : ''}`
    : '';
  return `${recipeTitle(r.name)} · ${r.domain}${play}${r.stages > 1 ? ` · stage ${r.stage + 1} of ${r.stages}` : ''}`;
}
