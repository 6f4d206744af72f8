// The loop's two optimizers (issue 16 item 2). The offline one wraps offline.ts (no endpoint).
// The endpoint one asks an LLM for a revised template: it is shown the template, sample
// system-prompt fields, the grouped errors and the lineage so far, and must answer with the whole
// template inside <template> tags and a NOTE line. Its reply is repaired where that is safe (no
// tags, a code fence, Windows line ends) and rejected with the reason kept where it is not (no
// template at all, a placeholder dropped, a syntax error or an unknown name, each with its line).
import type { ChatMessage } from '../chat.ts';
import type { ChatComplete } from '../judge/llm.ts';
import { checkTemplateText } from '../templates/builtin.ts';
import { placeholderNames } from '../templates/jinja.ts';
import { formatAnalysis } from './analysis.ts';
import type { Candidate, Optimizer, ProposeContext, Version } from './loop.ts';
import { proposeOffline } from './offline.ts';

/**
 * Variable names a template reads, sorted: the template language's own placeholderNames
 * (src/core/templates/jinja.ts), so names it binds itself (the history loop's `turn`, a `set`)
 * are not placeholders and a candidate is checked exactly as the Prompts view checks a text.
 */
export function templateVariables(text: string): string[] {
  return [...placeholderNames(text)].sort();
}

/**
 * Why a candidate text cannot be used, relative to its parent: placeholders the parent uses that
 * the candidate dropped (said alone when any); else its syntax, unknown names and a missing
 * history loop or action (checkTemplateText, each with its line), leaving out problems the parent
 * has too (they are not the candidate's doing). Empty when usable.
 */
export function candidateProblems(text: string, parentText: string): string[] {
  const kept = new Set(templateVariables(text));
  const lost = templateVariables(parentText).filter((v) => !kept.has(v));
  if (lost.length) return [`dropped placeholder(s) ${lost.map((v) => `{{ ${v} }}`).join(', ')}`];
  const inherited = new Set(checkTemplateText(parentText).map((p) => p.message));
  return checkTemplateText(text)
    .filter((p) => !inherited.has(p.message))
    .map((p) => `line ${p.line}: ${p.message}`);
}

export function offlineOptimizer(options: { anchor?: RegExp } = {}): Optimizer {
  return {
    name: 'offline',
    async propose(ctx: ProposeContext): Promise<Candidate[]> {
      const tried = new Set(ctx.lineage.map((v) => v.text));
      return proposeOffline(ctx.parent.text, ctx.parent.analysis, ctx.k, `${ctx.seed}:${ctx.round}`, { anchor: options.anchor, exclude: tried });
    },
  };
}

export interface EndpointOptimizerOptions {
  complete: ChatComplete;
  /** A few dev samples' five system-prompt fields, as text (the caller renders them). */
  samples: string;
  /** Names of the variables a template may use (for the instructions). */
  variables: readonly string[];
  temperature?: number;
  maxTokens?: number;
}

const SYSTEM = [
  "You improve the system-prompt template of a language world model: a small model that, given a task description, an action space, an initial state, demonstrations, a simulation instruction and the history of actions and observations, writes the environment's next observation.",
  'The template is a Jinja document. Its {{ variables }} are filled per sample; keep every variable the template already uses, and use no others than those listed.',
  'Study the errors, change the template so the model makes fewer of them, and keep what works.',
  'Answer with the complete revised template inside <template></template> tags, then one line starting with NOTE: saying in one sentence what you changed and why.',
].join('\n');

function lineageText(lineage: readonly Version[]): string {
  return lineage
    .slice(-12)
    .map(
      (v) =>
        `- ${v.id}${v.parent ? ` (from ${v.parent})` : ''}: ${v.status}${typeof v.mean === 'number' ? `, mean ${v.mean.toFixed(1)}` : ''}; ${v.note}${v.reason ? ` — ${v.reason}` : ''}`,
    )
    .join('\n');
}

export function optimizerMessages(ctx: ProposeContext, o: Pick<EndpointOptimizerOptions, 'samples' | 'variables'>, attempt: number): ChatMessage[] {
  const user = [
    `Round ${ctx.round}, candidate ${attempt + 1} of ${ctx.k}.${attempt > 0 ? ' Propose a different change from the earlier candidates of this round.' : ''}`,
    `Variables available: ${o.variables.join(', ')}.`,
    '',
    `Current template (${ctx.parent.id}):`,
    '<current_template>',
    ctx.parent.text,
    '</current_template>',
    '',
    'Sample system-prompt fields:',
    o.samples,
    '',
    'Errors of the current template on the dev samples:',
    formatAnalysis(ctx.parent.analysis),
    '',
    'Lineage so far:',
    lineageText(ctx.lineage),
  ].join('\n');
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: user },
  ];
}

/** The template and note in an optimizer's reply: used as is, repaired, or rejected with the reason. */
export function readOptimizerReply(reply: string, parentText: string): Candidate {
  const text0 = reply.replace(/^\uFEFF/u, '').replace(/\r\n?/gu, '\n');
  const note = /^\s*NOTE:\s*(.+)$/mu.exec(text0)?.[1]?.trim() ?? '';
  const repairs: string[] = [];
  let body: string | null = /<template>\n?([\s\S]*?)\n?<\/template>/u.exec(text0)?.[1] ?? null;
  if (body === null) {
    const open = /<template>\n?([\s\S]*)$/u.exec(text0);
    const fence = /```[\w-]*\n([\s\S]*?)\n```/u.exec(text0);
    if (open && !/<\/template>/u.test(text0)) {
      body = open[1].replace(/\n?\s*NOTE:.*$/su, '');
      repairs.push('the closing </template> tag was missing');
    } else if (fence) {
      body = fence[1];
      repairs.push('the template came in a code fence, not <template> tags');
    }
  } else {
    const fenced = /^```[\w-]*\n([\s\S]*?)\n```$/u.exec(body.trim());
    if (fenced) {
      body = fenced[1];
      repairs.push('a code fence inside the tags was removed');
    }
  }
  const base = note || 'the optimizer gave no note';
  if (body === null || !body.trim()) return { note: base, rejected: 'the reply holds no template (no <template> tags and no code fence)' };
  const problems = candidateProblems(body, parentText);
  if (problems.length)
    return { note: base, text: body, rejected: `the reply ${problems[0].startsWith('dropped') ? '' : 'is not a usable template: '}${problems.join('; ')}` };
  if (body.trim() === parentText.trim()) return { note: base, text: body, rejected: 'the reply is the current template unchanged' };
  return { note: repairs.length ? `${base} (repaired: ${repairs.join('; ')})` : base, text: body };
}

export function endpointOptimizer(o: EndpointOptimizerOptions): Optimizer {
  return {
    name: 'endpoint',
    async propose(ctx: ProposeContext, signal?: AbortSignal): Promise<Candidate[]> {
      const out: Candidate[] = [];
      for (let i = 0; i < ctx.k; i++) {
        let reply: string;
        try {
          reply = await o.complete(optimizerMessages(ctx, o, i), { temperature: o.temperature ?? 0.7, maxTokens: o.maxTokens ?? 4096, signal });
        } catch (e) {
          if (signal?.aborted) throw e;
          out.push({ note: 'the optimizer endpoint failed', rejected: `endpoint error: ${(e as Error).message}` });
          continue;
        }
        out.push(readOptimizerReply(reply, ctx.parent.text));
      }
      return out;
    },
  };
}
