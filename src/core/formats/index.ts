// Importers and exporters of trajectory formats, streaming where the input can be large.
export * from './types.ts';
export * from './lines.ts';
export * from './import.ts';
export * from './export.ts';
export { systemPromptFromText, systemPromptToText, SYSTEM_PROMPT_HEADERS } from './systemPromptText.ts';
export { toAgentWorldBenchRecords, cleanAction, cleanObservation, decorateAction, decorateObservation, idStem } from './agentworldbench.ts';
export type { AwbRecord } from '../schema/agentworldbench.ts';
export { toolCallText, contentText } from './openai.ts';
export { agentInstructDomain } from './agentinstruct.ts';
