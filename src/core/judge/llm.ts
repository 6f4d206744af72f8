// LLM judges: any chat model behind the Judge interface. The transport is injected (the
// endpoint client in src/backends implements it), so this module stays free of network code.
import { parseVerdict } from './parse.ts';
import { judgeSystemPrompt, judgeUserPrompt, type JudgePromptLimits } from './prompt.ts';
import { scoredVerdict, type Judge, type JudgeInput, type Verdict } from './types.ts';

export interface JudgeChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One non-streamed chat completion. Errors with `fatal: true` (refused key, CORS) stop a run. */
export type ChatComplete = (messages: JudgeChatMessage[], options: { temperature: number; maxTokens: number; signal?: AbortSignal }) => Promise<string>;

export interface LlmJudgeOptions {
  name: string;
  complete: ChatComplete;
  /** Extra attempts when the reply has no parseable verdict or the call fails transiently. Default 2. */
  retries?: number;
  /** Default 0: the verdict of one reply should not depend on sampling luck. Retries use 0.7 to get a different reply. */
  temperature?: number;
  maxTokens?: number;
  limits?: JudgePromptLimits;
}

export function isFatal(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { fatal?: unknown }).fatal === true;
}

export function createLlmJudge(options: LlmJudgeOptions): Judge {
  const retries = options.retries ?? 2;
  return {
    name: options.name,
    async judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict> {
      const messages: JudgeChatMessage[] = [
        { role: 'system', content: judgeSystemPrompt(input.domain) },
        { role: 'user', content: judgeUserPrompt(input, options.limits) },
      ];
      let lastError = '';
      let lastRaw: string | undefined;
      for (let attempt = 0; attempt <= retries; attempt++) {
        let reply: string;
        try {
          reply = await options.complete(messages, {
            temperature: attempt === 0 ? (options.temperature ?? 0) : 0.7,
            maxTokens: options.maxTokens ?? 2048,
            signal,
          });
        } catch (e) {
          if (isFatal(e) || signal?.aborted) throw e;
          lastError = (e as Error).message;
          continue;
        }
        lastRaw = reply;
        const parsed = parseVerdict(reply);
        if (parsed.ok) return scoredVerdict(parsed.scores, parsed.strengths, parsed.weaknesses, reply);
        lastError = parsed.error;
      }
      const failed: Verdict = { failed: true, error: `${options.name}: no usable verdict after ${retries + 1} attempts (${lastError})` };
      if (lastRaw !== undefined) failed.raw = lastRaw;
      return failed;
    },
  };
}
