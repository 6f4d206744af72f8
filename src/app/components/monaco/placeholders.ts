// The placeholders PromptTemplate strings may use (see fillPlaceholders in core/templates),
// kept apart from the Monaco setup so validation does not pull the editor in.
export const PLACEHOLDER_NAMES = ['domain', 'index', 'action', 'observation'];
