// System-prompt templates (docs/method.md §5, §9): a template turns the five system-prompt fields and the
// history/action layout into text. A template is a text in a Jinja dialect (docs/templates.md),
// so the prompt-optimization loop can propose new versions and people can paste in prose.
// This file is the front door: the template shape and built-ins (builtin.ts), the language
// (jinja.ts), rendering (render.ts), old JSON templates (legacy.ts), folders of per-domain
// prompts (folder.ts) and the per-stage template mix (stages.ts) are re-exported.
export { BUILTIN_TEMPLATES, TARGET_OPEN, TARGET_CLOSE, checkTemplate, checkTemplateText, templateTextFor, type PromptTemplate } from './builtin.ts';
export {
  TEMPLATE_VARIABLES,
  TEMPLATE_VARIABLE_NAMES,
  placeholderNames,
  placeholderUses,
  templateLiterals,
  type TemplateProblem,
  type NameUse,
} from './jinja.ts';
export { itemText, type LayoutItem, type LayoutPiece, type ValueRef } from './layout.ts';
export {
  sampleLayout,
  renderProblems,
  renderContext,
  renderSystem,
  renderSample,
  segmentWeights,
  renderChat,
  renderTrajectory,
  trajectoryParts,
  type RenderOptions,
  type RenderedSample,
} from './render.ts';
export {
  DEFAULT_STAGE_TEMPLATES,
  checkDistribution,
  pickVersion,
  templateForSample,
  versionCounts,
  versionForSample,
  type TrainingStage,
  type TemplateDistribution,
} from './stages.ts';
export { fromLegacy, isLegacyTemplate, normalizeTemplate, normalizeTemplates, type LegacyPromptTemplate } from './legacy.ts';
export { importPromptFolder, PLACEHOLDER_ALIASES, PROMPT_FILE, type FolderFile } from './folder.ts';
