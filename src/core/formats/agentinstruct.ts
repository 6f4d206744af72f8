// AgentInstruct records: `{id, conversations: [{from: human|gpt, loss, value}]}`. The first
// human message is the task (instructions, often with examples); each gpt message is an
// action and the human message after it the environment's observation. The gpt message's
// `loss` flag says whether the source trained on that step (false on the scripted examples
// at the start), and is kept as the turn's loss_weight_override: true → 1, false → 0.
import { schemaErrors } from '../schema/validate.ts';
import type { Trajectory } from '../schema/types.ts';
import { buildConversation, recordIdBase, systemPromptFrom, type ConversationStep } from './conversation.ts';
import { isObject, type FormatImporter } from './types.ts';

/** AgentInstruct's task families → our domains; families we have no domain for keep their name. */
const FAMILY_DOMAIN: Record<string, string> = {
  os: 'os',
  webshop: 'web',
  mind2web: 'web',
  db: 'db',
  kg: 'kg',
  alfworld: 'alfworld',
};

export function agentInstructDomain(id: string): string | undefined {
  const m = /^([a-z0-9]+?)[_-]/i.exec(id);
  if (!m) return undefined;
  const fam = m[1].toLowerCase();
  return Object.hasOwn(FAMILY_DOMAIN, fam) ? FAMILY_DOMAIN[fam] : fam;
}

export const agentInstructImporter: FormatImporter = {
  name: 'agentinstruct',
  detect(r) {
    if (!isObject(r) || !Array.isArray(r.conversations)) return 0;
    return r.conversations.some((m) => isObject(m) && 'loss' in m) ? 9 : 0;
  },
  session(ctx) {
    return {
      add(record, at) {
        const errors = schemaErrors('agentinstruct', record);
        if (errors.length) return { trajectories: [], errors };
        const r = record as { id?: string | number; conversations: { from: 'human' | 'gpt'; value: string; loss?: boolean | null }[] };
        const steps: ConversationStep[] = r.conversations.map((m) =>
          m.from === 'gpt'
            ? { kind: 'action', text: m.value, ...(typeof m.loss === 'boolean' ? { lossFlag: m.loss } : {}) }
            : { kind: 'observation', text: m.value },
        );
        const conv = buildConversation(steps);
        if (!conv.turns.length) {
          return {
            trajectories: [],
            errors: [{ pointer: '/conversations', message: 'no gpt message followed by a human reply, so there is no turn to learn from' }],
          };
        }
        const id = r.id !== undefined ? String(r.id) : `${recordIdBase(ctx.file)}-L${at.line}`;
        const t: Trajectory = {
          id,
          domain: ctx.domainOverride ?? agentInstructDomain(id) ?? ctx.fallbackDomain,
          system_prompt: systemPromptFrom(conv.contextParts.join('\n\n'), ''),
          turns: conv.turns,
          source: { format: 'agentinstruct', ...(ctx.file ? { file: ctx.file } : {}), line: at.line, ...(ctx.keepRaw ? { raw: record } : {}) },
        };
        if (conv.finalAction !== undefined) t.metadata = { final_action: conv.finalAction };
        return { trajectories: [t], errors: [] };
      },
      finish: () => ({ trajectories: [], errors: [] }),
    };
  },
};
