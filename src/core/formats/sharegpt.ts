// ShareGPT (LLaMA-Factory flavour): `{conversations: [{from, value}], system?, tools?}` with
// human / gpt / system / function_call / observation. gpt and function_call are the agent's
// action; observation (and human after the first action) is the environment's reply.
import { schemaErrors } from '../schema/validate.ts';
import type { Trajectory } from '../schema/types.ts';
import { buildConversation, recordIdBase, systemPromptFrom, type ConversationStep } from './conversation.ts';
import { isObject, type FormatImporter } from './types.ts';

const ACTION_ROLES = new Set(['gpt', 'assistant', 'function_call']);

export const shareGptImporter: FormatImporter = {
  name: 'sharegpt',
  detect: (r) => (isObject(r) && Array.isArray(r.conversations) ? 5 : 0),
  session(ctx) {
    return {
      add(record, at) {
        const errors = schemaErrors('sharegpt', record);
        if (errors.length) return { trajectories: [], errors };
        const r = record as { conversations: { from: string; value: string }[]; system?: string; tools?: string | unknown[]; id?: unknown; domain?: unknown };
        const steps: ConversationStep[] = [];
        if (r.system) steps.push({ kind: 'context', text: r.system });
        for (const m of r.conversations) {
          if (m.from === 'system') steps.push({ kind: 'context', text: m.value });
          else if (ACTION_ROLES.has(m.from)) steps.push({ kind: 'action', text: m.value });
          else steps.push({ kind: 'observation', text: m.value });
        }
        const conv = buildConversation(steps);
        if (!conv.turns.length) {
          return {
            trajectories: [],
            errors: [
              {
                pointer: '/conversations',
                message: 'no gpt/function_call message followed by an observation or human reply, so there is no turn to learn from',
              },
            ],
          };
        }
        const tools = r.tools === undefined ? '' : typeof r.tools === 'string' ? r.tools : JSON.stringify(r.tools);
        const t: Trajectory = {
          id: typeof r.id === 'string' || typeof r.id === 'number' ? String(r.id) : `${recordIdBase(ctx.file)}-L${at.line}`,
          domain: ctx.domainOverride ?? (typeof r.domain === 'string' && r.domain ? r.domain : ctx.fallbackDomain),
          system_prompt: systemPromptFrom(conv.contextParts.join('\n\n'), tools),
          turns: conv.turns,
          source: { format: 'sharegpt', ...(ctx.file ? { file: ctx.file } : {}), line: at.line, ...(ctx.keepRaw ? { raw: record } : {}) },
        };
        if (conv.finalAction !== undefined) t.metadata = { final_action: conv.finalAction };
        return { trajectories: [t], errors: [] };
      },
      finish: () => ({ trajectories: [], errors: [] }),
    };
  },
};
