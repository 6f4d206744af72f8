// OpenAI chat-completions messages: `{messages: [{role, content, tool_calls?, tool_call_id?}], tools?}`.
// system/developer → task context; assistant (text and tool calls) → action; tool replies and
// later user messages → observation.
import { schemaErrors } from '../schema/validate.ts';
import type { Trajectory } from '../schema/types.ts';
import { buildConversation, recordIdBase, systemPromptFrom, type ConversationStep } from './conversation.ts';
import { isObject, type FormatImporter } from './types.ts';

interface OpenAiMessage {
  role: string;
  content?: string | null | { type?: string; text?: string }[];
  name?: string;
  tool_calls?: { id?: string; function: { name: string; arguments?: string | object } }[];
  tool_call_id?: string;
}

export function contentText(c: OpenAiMessage['content']): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

/** How a tool call reads as an action: `name(arguments)`, arguments as the model wrote them. */
export function toolCallText(name: string, args: string | object | undefined): string {
  const a = args === undefined ? '' : typeof args === 'string' ? args : JSON.stringify(args);
  return `${name}(${a})`;
}

export const openAiImporter: FormatImporter = {
  name: 'openai',
  detect: (r) => (isObject(r) && Array.isArray(r.messages) ? 8 : 0),
  session(ctx) {
    return {
      add(record, at) {
        const errors = schemaErrors('openai', record);
        if (errors.length) return { trajectories: [], errors };
        const r = record as { messages: OpenAiMessage[]; tools?: unknown[]; id?: unknown; domain?: unknown };
        const callNames = new Map<string, string>();
        const steps: ConversationStep[] = [];
        let callsInStep = 0;
        for (const m of r.messages) {
          const text = contentText(m.content);
          if (m.role === 'system' || m.role === 'developer') steps.push({ kind: 'context', text });
          else if (m.role === 'assistant') {
            const parts = text ? [text] : [];
            callsInStep = m.tool_calls?.length ?? 0;
            for (const call of m.tool_calls ?? []) {
              if (call.id) callNames.set(call.id, call.function.name);
              parts.push(toolCallText(call.function.name, call.function.arguments));
            }
            steps.push({ kind: 'action', text: parts.join('\n') });
          } else if (m.role === 'tool' || m.role === 'function') {
            // With several tool replies in one step, say which call each answers.
            const label = m.tool_call_id ? (callNames.get(m.tool_call_id) ?? m.tool_call_id) : m.name;
            const many = callsInStep > 1 && label;
            steps.push({ kind: 'observation', text: many ? `[${label}] ${text}` : text });
          } else steps.push({ kind: 'observation', text });
        }
        const conv = buildConversation(steps);
        if (!conv.turns.length) {
          return {
            trajectories: [],
            errors: [{ pointer: '/messages', message: 'no assistant message followed by a tool or user reply, so there is no turn to learn from' }],
          };
        }
        const t: Trajectory = {
          id: typeof r.id === 'string' || typeof r.id === 'number' ? String(r.id) : `${recordIdBase(ctx.file)}-L${at.line}`,
          domain: ctx.domainOverride ?? (typeof r.domain === 'string' && r.domain ? r.domain : ctx.fallbackDomain),
          system_prompt: systemPromptFrom(conv.contextParts.join('\n\n'), r.tools ? JSON.stringify(r.tools) : ''),
          turns: conv.turns,
          source: { format: 'openai', ...(ctx.file ? { file: ctx.file } : {}), line: at.line, ...(ctx.keepRaw ? { raw: record } : {}) },
        };
        if (conv.finalAction !== undefined) t.metadata = { final_action: conv.finalAction };
        return { trajectories: [t], errors: [] };
      },
      finish: () => ({ trajectories: [], errors: [] }),
    };
  },
};
