// What each training metric means, for the latest-values table (README has the long form).
export const METRIC_HELP: Record<string, string> = {
  loss: 'Training loss on this step’s batch (RL: the negated GSPO objective)',
  eval_loss: 'Loss on the held-out eval split (lower is better)',
  unigram_loss: 'Loss of a context-free model that knows only token frequencies: the baseline to beat',
  lr: 'Learning rate of this step (warmup, then cosine decay)',
  grad_norm: 'Norm of the gradient before clipping',
  tokens_per_s: 'Tokens processed per second on this step',
  eval_judge_mean: 'Mean local-judge total of generated eval predictions',
  reward: 'Mean reward of the rollouts: 0.9 × judge + 0.1 × verifier',
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
const ORDER = ['loss', 'eval_loss', 'unigram_loss', 'reward', 'reward_judge', 'reward_verifier', 'clip_fraction', 'mean_ratio', 'response_length', 'lr', 'grad_norm', 'tokens_per_s'];

export function metricOrder(a: string, b: string): number {
  const ia = ORDER.indexOf(a);
  const ib = ORDER.indexOf(b);
  if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function formatMetric(name: string, v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (name.startsWith('share_') || name.startsWith('coverage_') || name === 'clip_fraction') return `${(v * 100).toFixed(1)}%`;
  if (name === 'lr') return v.toExponential(2);
  if (name === 'tokens_per_s') return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
  if (name === 'mean_ratio') return v.toFixed(5);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toFixed(4);
}
