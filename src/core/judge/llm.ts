// LLM judges: any chat model behind the Judge interface. The transport is injected (the
// endpoint client in src/backends implements it), so this module stays free of network code.
// One retry policy covers both kinds of failure: a reply with no usable verdict and a transient
// transport error each use one of the `retries + 1` attempts (the transport itself is expected
// not to retry, so a sample costs at most that many requests).
import type { ChatMessage } from '../chat.ts';
import { parseVerdict } from './parse.ts';
import { judgeSystemPrompt, judgeUserPrompt, type JudgePromptLimits } from './prompt.ts';
import { scoredVerdict, type Judge, type JudgeInput, type Verdict } from './types.ts';

/**
 * One non-streamed chat completion. Errors with `fatal: true` (refused key, CORS) stop a run;
 * `retryable: false` ones (a refused request) end the sample's attempts; `retryAfterMs` is the
 * server's requested pause.
 */
export type ChatComplete = (messages: ChatMessage[], options: { temperature: number; maxTokens: number; signal?: AbortSignal }) => Promise<string>;

/** The public AgentWorldBench judge's settings: 32768 tokens (room for reasoning judges) at 0.6. */
export const DEFAULT_JUDGE_MAX_TOKENS = 32768;
export const DEFAULT_JUDGE_TEMPERATURE = 0.6;

export interface LlmJudgeOptions {
  name: string;
  complete: ChatComplete;
  /** Extra attempts after an unparseable verdict or a transient transport error. Default 2 (3 attempts, as the public judge). */
  retries?: number;
  /** Default 0.6. Retries use the same temperature, or 0.7 when it is 0 (the same reply would come back). */
  temperature?: number;
  /** Default 32768. */
  maxTokens?: number;
  limits?: JudgePromptLimits;
  /** Per-domain system prompts (e.g. the public ones from `--judge-prompts DIR`); domains not in it get ours. */
  systemPrompts?: Readonly<Record<string, string>>;
  /** Pause before retrying a transport error: doubling from 1 s up to 30 s, or the server's Retry-After up to `maxRetryAfterMs` (default 60 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  maxRetryAfterMs?: number;
  /** Waits between attempts; replaceable so tests do not sleep. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export function isFatal(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { fatal?: unknown }).fatal === true;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** How long to wait after transport error `e` on attempt `attempt` (0-based); null: do not retry. */
export function retryDelayMs(e: unknown, attempt: number, o: Pick<LlmJudgeOptions, 'backoffMs' | 'maxBackoffMs' | 'maxRetryAfterMs'> = {}): number | null {
  const err = (typeof e === 'object' && e !== null ? e : {}) as { retryable?: unknown; retryAfterMs?: unknown };
  if (err.retryable === false) return null;
  if (typeof err.retryAfterMs === 'number' && Number.isFinite(err.retryAfterMs)) return Math.min(Math.max(0, err.retryAfterMs), o.maxRetryAfterMs ?? 60_000);
  return Math.min(o.maxBackoffMs ?? 30_000, (o.backoffMs ?? 1000) * 2 ** attempt);
}

export function createLlmJudge(options: LlmJudgeOptions): Judge {
  const retries = options.retries ?? 2;
  const temperature = options.temperature ?? DEFAULT_JUDGE_TEMPERATURE;
  const sleep = options.sleep ?? sleepFor;
  return {
    name: options.name,
    async judge(input: JudgeInput, signal?: AbortSignal): Promise<Verdict> {
      const messages: ChatMessage[] = [
        {
          role: 'system',
          content:
            options.systemPrompts && Object.hasOwn(options.systemPrompts, input.domain) ? options.systemPrompts[input.domain] : judgeSystemPrompt(input.domain),
        },
        { role: 'user', content: judgeUserPrompt(input, options.limits) },
      ];
      let lastError = '';
      let lastRaw: string | undefined;
      let attempts = 0;
      for (let attempt = 0; attempt <= retries; attempt++) {
        attempts++;
        let reply: string;
        try {
          reply = await options.complete(messages, {
            temperature: attempt === 0 || temperature > 0 ? temperature : 0.7,
            maxTokens: options.maxTokens ?? DEFAULT_JUDGE_MAX_TOKENS,
            signal,
          });
        } catch (e) {
          if (isFatal(e) || signal?.aborted) throw e;
          lastError = (e as Error).message;
          const wait = retryDelayMs(e, attempt, options);
          if (wait === null) break;
          if (attempt < retries && wait > 0) await sleep(wait, signal);
          continue;
        }
        lastRaw = reply;
        const parsed = parseVerdict(reply);
        if (parsed.ok) return scoredVerdict(parsed.scores, parsed.strengths, parsed.weaknesses, reply);
        lastError = parsed.error;
      }
      const failed: Verdict = {
        failed: true,
        error: `${options.name}: no usable verdict after ${attempts} attempt${attempts === 1 ? '' : 's'} (${lastError})`,
      };
      if (lastRaw !== undefined) failed.raw = lastRaw;
      return failed;
    },
  };
}
