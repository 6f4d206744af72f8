// System-prompt templates (SPEC §5, §9): a template turns the five system-prompt fields and the
// history/action layout into text. Templates are plain data (strings with {{placeholders}}) so
// the prompt-optimisation loop can propose new versions and store them as JSON.
// This file is the front door: the template shape and built-ins (builtin.ts), rendering
// (render.ts) and the per-stage template mix (stages.ts) are re-exported.
export { BUILTIN_TEMPLATES, checkTemplate, type PromptTemplate } from './builtin.ts';
export { fillPlaceholders, renderSystem, renderSample, segmentWeights, renderChat, renderTrajectory, type RenderOptions, type RenderedSample } from './render.ts';
export { DEFAULT_STAGE_TEMPLATES, checkDistribution, pickVersion, templateForSample, type TrainingStage, type TemplateDistribution } from './stages.ts';
