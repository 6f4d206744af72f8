// Shared by the chat-style importers (OpenAI messages, ShareGPT, AgentInstruct): a world model
// sees the agent as the one acting and the environment as the one answering, so chat roles map
// onto context (before the first action), actions and observations.
import { emptySystemPrompt, type SystemPrompt, type Turn } from '../schema/types.ts';

export interface ConversationStep {
  kind: 'context' | 'action' | 'observation';
  text: string;
  /** Carried onto the turn this step lands in (AgentInstruct loss flags). */
  lossFlag?: boolean;
}

export interface BuiltConversation {
  contextParts: string[];
  turns: Turn[];
  /** An agent message with no environment reply after it (a final answer), kept out of the turns. */
  finalAction?: string;
}

/**
 * Consecutive agent messages form one action and consecutive environment messages one
 * observation, because a world model predicts everything the environment says between two
 * agent moves as one observation.
 */
export function buildConversation(steps: ConversationStep[]): BuiltConversation {
  const contextParts: string[] = [];
  const turns: Turn[] = [];
  let action: string[] | null = null;
  let actionFlag: boolean | undefined;
  let observation: string[] | null = null;
  const close = () => {
    if (action && observation) {
      const turn: Turn = { action: action.join('\n'), observation: observation.join('\n') };
      if (actionFlag !== undefined) turn.metadata = { loss_weight_override: actionFlag ? 1 : 0 };
      turns.push(turn);
      action = null;
      observation = null;
      actionFlag = undefined;
    }
  };
  for (const s of steps) {
    if (s.kind === 'action') {
      if (observation) close();
      action ??= [];
      action.push(s.text);
      if (s.lossFlag !== undefined) actionFlag = (actionFlag ?? false) || s.lossFlag;
    } else if (!action && !turns.length) {
      contextParts.push(s.text);
    } else if (!action) {
      // The environment spoke twice in a row: it is still the same observation.
      const last = turns[turns.length - 1];
      last.observation += '\n' + s.text;
    } else {
      observation ??= [];
      observation.push(s.text);
    }
  }
  close();
  const finalAction = action ? (action as string[]).join('\n') : undefined;
  return { contextParts, turns, ...(finalAction !== undefined ? { finalAction } : {}) };
}

export function systemPromptFrom(task: string, actionSpace: string): SystemPrompt {
  return { ...emptySystemPrompt(), task_description: task, action_space: actionSpace };
}

/** The file name without extension: a stable prefix for the ids of records that carry none. */
export function recordIdBase(file: string | undefined): string {
  if (!file) return 'record';
  const base = file.split(/[\\/]/).pop() ?? file;
  return base.replace(/\.(jsonl?|ndjson|txt)$/i, '') || 'record';
}
