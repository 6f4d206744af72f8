// Turn-level information-theoretic loss masking (docs/method.md §4): four metrics per (action,
// observation) pair (metrics.ts), seven categories by a rule table (rules.ts, documented with a
// worked example per category in docs/masking.md), one loss ratio per category applied to every
// token of the observation ("soft filtering": tokens are weighted, never deleted). This file is
// the front door: the dataset-level pass (dataset.ts) and statistics (stats.ts) are re-exported.
export { extractWords, wordSet, codePointLength } from './words.ts';
export { normalizeForRecurrence, turnFeatures, turnMetrics, type TurnFeatures, type TurnMetrics } from './metrics.ts';
export {
  categorizeTurn,
  checkMaskConfig,
  DEFAULT_MASK_CONFIG,
  MASK_CATEGORIES,
  maskConfig,
  NUMERIC_SETTINGS,
  type MaskCategory,
  type MaskConfig,
  type NumericSetting,
} from './rules.ts';
export { MASK_CONFIG_FORMAT, MaskConfigError, maskConfigChanges, maskConfigFromJson, maskConfigToJson, parseMaskConfig } from './config.ts';
export { recurrenceTable, observationRecurrence, turnMask, categorizeDataset, type TurnMask, type TrajectoryMask } from './dataset.ts';
export { maskStats, type Histogram, type CategoryCounts, type MaskStats } from './stats.ts';
export { tokenLossWeights, type WeightedTokens } from './weights.ts';
