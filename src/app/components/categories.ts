// How the seven mask categories and the three span kinds look in every view: one colour per
// category (CSS variables in styles.css, with dark-mode variants) and a short description.
import { MASK_CATEGORIES, type MaskCategory } from '../../core/masking/index.ts';
import type { SpanKind } from '../../core/schema/types.ts';

export { MASK_CATEGORIES };

export const CATEGORY_LABEL: Record<MaskCategory, string> = {
  retrieval: 'Retrieval',
  expansion: 'Expansion',
  action: 'Action',
  transform: 'Transform',
  other: 'Other',
  boilerplate: 'Boilerplate',
  echo: 'Echo',
};

export const CATEGORY_MEANING: Record<MaskCategory, string> = {
  retrieval: 'returns information the action did not contain',
  expansion: 'elaborates the action with much new content',
  action: 'the visible effect of a state-changing action',
  transform: "the action's content reshaped",
  other: 'none of the above',
  boilerplate: 'the same content-free text recurring across turns',
  echo: 'mostly repeats the action',
};

export const categoryColor = (c: MaskCategory) => `var(--cat-${c})`;

export const SPAN_LABEL: Record<SpanKind, string> = {
  deterministic: 'deterministic',
  pre_existing: 'pre-existing',
  runtime_metadata: 'runtime metadata',
};

export const SPAN_MEANING: Record<SpanKind, string> = {
  deterministic: 'fully determined by the action and the known state: must match exactly',
  pre_existing: 'environment state the model could not have seen: format and plausibility only',
  runtime_metadata: 'PIDs, timestamps, sizes: format and plausibility only',
};

export const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
