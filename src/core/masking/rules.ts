// The decision rules of docs/method.md §4: seven categories, one loss ratio each, every threshold
// configurable. docs/masking.md has the same table with a worked example per category; each of
// those examples is a test (masking.test.ts reads them from the doc).
import type { TurnFeatures } from './metrics.ts';

export type MaskCategory = 'retrieval' | 'expansion' | 'action' | 'transform' | 'other' | 'boilerplate' | 'echo';

/** In the order the viewer lists them. */
export const MASK_CATEGORIES: readonly MaskCategory[] = ['retrieval', 'expansion', 'action', 'transform', 'other', 'boilerplate', 'echo'];

/**
 * Every threshold and ratio of the categorisation. Rules are tried in this order and the first
 * that holds decides (see categorizeTurn); all bounds are inclusive:
 *  1. boilerplate: the observation has no words, or the same normalised observation (lower-case,
 *     whitespace collapsed, digit runs → 0) of at most `boilerplateMaxChars` follows at least
 *     `boilerplateMinRecurrence` different actions in the dataset: text that does not depend on
 *     what the agent did ("OK", "Command executed.", an empty output);
 *  2. echo:        Jac ≥ echoMinJaccard and Nov ≤ echoMaxNovelty: the observation and the action
 *                  are mostly the same word set (`Think(x)` → `{"thought": x}`). Jac, not OL alone,
 *                  because it also counts what the observation adds: a transform keeps a few of
 *                  the action's words (OL small, so Jac small), an echo keeps most and adds little;
 *  3. retrieval:   Nov ≥ retrievalMinNovelty and (R ≥ retrievalMinRatio or OL ≤ retrievalMaxOverlap):
 *                  mostly new words, and either long (file contents, listings, pages) or sharing
 *                  almost nothing with the action whatever its length (`cat /etc/hostname` →
 *                  `web-01`, `pwd` → a path, a one-line search answer);
 *  4. expansion:   Nov ≥ expansionMinNovelty, R ≥ expansionMinRatio and OL ≥ expansionMinOverlap
 *                  (restates part of the action and adds much to it);
 *  5. transform:   Nov ≤ transformMaxNovelty and OL ≥ transformMinOverlap (built from the action's
 *                  own words, reshaped: sorted, reformatted, computed);
 *  6. action:      at most actionMaxWords distinct words and R ≤ actionMaxRatio (a short, visible
 *                  effect of a state-changing action: "removed 'a.txt'", `{"deleted": 17}`);
 *  7. other.
 */
export interface MaskConfig {
  boilerplateMinRecurrence: number;
  boilerplateMaxChars: number;
  echoMinJaccard: number;
  echoMaxNovelty: number;
  retrievalMinNovelty: number;
  retrievalMinRatio: number;
  retrievalMaxOverlap: number;
  expansionMinNovelty: number;
  expansionMinRatio: number;
  expansionMinOverlap: number;
  transformMaxNovelty: number;
  transformMinOverlap: number;
  actionMaxWords: number;
  actionMaxRatio: number;
  /** Loss ratio per category, each in [0, 1]. */
  ratios: Record<MaskCategory, number>;
  /** Use a turn's `metadata.loss_weight_override` (e.g. AgentInstruct loss flags) instead of its ratio. */
  useOverrides: boolean;
}

export const DEFAULT_MASK_CONFIG: Readonly<MaskConfig> = Object.freeze({
  // Three different actions answered by the same short text is already a pattern, not a fact.
  boilerplateMinRecurrence: 3,
  // Longer texts that recur are usually the same file or page read again: information, not noise.
  boilerplateMaxChars: 200,
  // Think(check config) → {"thought": "check config"} shares 2 of 4 words (Jac 0.5) and adds one
  // (Nov 1/3); a longer thought only raises Jac. `echo hello world` → "hello world": Jac 2/3, Nov 0.
  echoMinJaccard: 0.5,
  echoMaxNovelty: 0.4,
  retrievalMinNovelty: 0.6,
  // Four times the action's length: a command line against a file or listing it returns.
  retrievalMinRatio: 4,
  // A short observation made of new words that reuses at most a quarter of the action's words
  // is content the action did not contain (a hostname, a path, an answer), however short.
  retrievalMaxOverlap: 0.25,
  expansionMinNovelty: 0.4,
  expansionMinRatio: 1.5,
  expansionMinOverlap: 0.3,
  transformMaxNovelty: 0.25,
  transformMinOverlap: 0.2,
  actionMaxWords: 24,
  actionMaxRatio: 3,
  ratios: Object.freeze({
    retrieval: 1.0, // fact of the method
    expansion: 0.8,
    action: 0.6,
    transform: 0.4,
    other: 0.5,
    boilerplate: 0.1, // fact of the method
    echo: 0.05, // fact of the method
  }) as Record<MaskCategory, number>,
  useOverrides: true,
});

/** Thresholds that are shares, in [0, 1]. */
export const UNIT_SETTINGS = [
  'echoMinJaccard',
  'echoMaxNovelty',
  'retrievalMinNovelty',
  'retrievalMaxOverlap',
  'expansionMinNovelty',
  'expansionMinOverlap',
  'transformMaxNovelty',
  'transformMinOverlap',
] as const;
/** Thresholds that are counts or length ratios, ≥ 0. */
export const POSITIVE_SETTINGS = [
  'boilerplateMinRecurrence',
  'boilerplateMaxChars',
  'retrievalMinRatio',
  'expansionMinRatio',
  'actionMaxWords',
  'actionMaxRatio',
] as const;
export type NumericSetting = (typeof UNIT_SETTINGS)[number] | (typeof POSITIVE_SETTINGS)[number];
/** Every numeric threshold, in the order of the rule table. */
export const NUMERIC_SETTINGS: readonly NumericSetting[] = [
  'boilerplateMinRecurrence',
  'boilerplateMaxChars',
  'echoMinJaccard',
  'echoMaxNovelty',
  'retrievalMinNovelty',
  'retrievalMinRatio',
  'retrievalMaxOverlap',
  'expansionMinNovelty',
  'expansionMinRatio',
  'expansionMinOverlap',
  'transformMaxNovelty',
  'transformMinOverlap',
  'actionMaxWords',
  'actionMaxRatio',
];

/** DEFAULT_MASK_CONFIG with some values replaced; ratios merge key by key. */
export function maskConfig(partial: Partial<Omit<MaskConfig, 'ratios'>> & { ratios?: Partial<Record<MaskCategory, number>> } = {}): MaskConfig {
  return { ...DEFAULT_MASK_CONFIG, ...partial, ratios: { ...DEFAULT_MASK_CONFIG.ratios, ...partial.ratios } };
}

/** Problems with a configuration, as messages naming the field; empty when usable. */
export function checkMaskConfig(config: MaskConfig): string[] {
  const errors: string[] = [];
  for (const k of UNIT_SETTINGS) if (!(config[k] >= 0 && config[k] <= 1)) errors.push(`${k} must be in [0, 1], got ${config[k]}`);
  for (const k of POSITIVE_SETTINGS) if (!(config[k] >= 0) || !Number.isFinite(config[k])) errors.push(`${k} must be a finite number ≥ 0, got ${config[k]}`);
  for (const c of MASK_CATEGORIES) {
    const v = config.ratios[c];
    if (!(v >= 0 && v <= 1)) errors.push(`ratios.${c} must be in [0, 1], got ${v}`);
  }
  return errors;
}

/** The rule table of MaskConfig, on precomputed features. */
export function categorizeTurn(f: TurnFeatures, config: MaskConfig = DEFAULT_MASK_CONFIG): MaskCategory {
  if (f.empty || f.recurrence >= config.boilerplateMinRecurrence) return 'boilerplate';
  if (f.jac >= config.echoMinJaccard && f.nov <= config.echoMaxNovelty) return 'echo';
  if (f.nov >= config.retrievalMinNovelty && (f.r >= config.retrievalMinRatio || f.ol <= config.retrievalMaxOverlap)) return 'retrieval';
  if (f.nov >= config.expansionMinNovelty && f.r >= config.expansionMinRatio && f.ol >= config.expansionMinOverlap) return 'expansion';
  if (f.nov <= config.transformMaxNovelty && f.ol >= config.transformMinOverlap) return 'transform';
  if (f.obsWords <= config.actionMaxWords && f.r <= config.actionMaxRatio) return 'action';
  return 'other';
}
