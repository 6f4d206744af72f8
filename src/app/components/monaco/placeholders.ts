// The variables a template may use (the data core's list), kept apart from the Monaco setup so
// validation does not pull the editor in.
export { TEMPLATE_VARIABLE_NAMES as PLACEHOLDER_NAMES } from '../../../core/templates/index.ts';
