// A model in the jobs worker, seen from the page as an LwmBackend: generate() runs one 'generate'
// job (src/jobs/playground.ts) and yields the observation as the worker streams it, so the page
// drives a checkpoint or a folder in the worker exactly as it drives an endpoint or a baseline in
// the page. What only a worker model reports (the model loaded, the context bar, the token count)
// reaches the caller through the hooks; a stop (the signal) asks the worker to stop, and the
// generation ends with what it had. A failure is the job's JobError (client.ts): its kind says
// what went wrong, and whether the device was lost meanwhile.
import type { GenerateOptions, GenerateRequest, LwmBackend, TurnRequest } from '../core/backend.ts';
import { isTurnRequest } from '../core/backend.ts';
import type { ContextReport } from '../core/playground/context.ts';
import type { PromptTemplate } from '../core/templates/index.ts';
import { JobError, type JobClient, type JobOutcome } from './client.ts';
import type { GenerateJobResult, GenerateJobSpec, PlaygroundModelInfo } from './playground.ts';
import { MODEL_NOT_LOADED } from './protocol.ts';

/** What a model in the worker is: its reference and the files it needs (from the page's pickers). */
export type WorkerModel = Pick<Extract<GenerateJobSpec, { model: unknown }>, 'model' | 'files' | 'bytes'>;

export interface WorkerBackendHooks {
  /** The model the worker loaded (before the first token, and again after a generation when it has more to say). */
  onModel?(model: PlaygroundModelInfo): void;
  onContext?(context: ContextReport): void;
  /** The job's id, when it starts (the page shows its stream under it). */
  onJob?(jobId: string): void;
  /** The worker's own ms for the tokens so far (GenerateOptions.onTokens gets the count). */
  onRate?(tokens: number, ms: number): void;
}

export interface WorkerBackend extends LwmBackend {
  /** Loads the model without generating (the page shows what was loaded, or why not, before the first turn). */
  load(): Promise<PlaygroundModelInfo>;
  /** The result of the last generation (its token count and time, as the worker measured them). */
  readonly last: GenerateJobResult | null;
}

type Outcome = JobOutcome<'generate'>;

/**
 * A worker model as a backend. `model(withBytes)` gives the job's model each time (a dropped
 * file's bytes only when asked: a worker that does not hold the file says MODEL_NOT_LOADED, and
 * the job is sent once more with them). `template` is the page's template for a checkpoint.
 */
export function workerBackend(
  client: JobClient,
  name: string,
  model: (withBytes: boolean) => WorkerModel,
  hooks: WorkerBackendHooks = {},
  template?: () => PromptTemplate | undefined,
): WorkerBackend {
  let last: GenerateJobResult | null = null;

  /** Runs one job, calling `piece` for each streamed text; settles when the job ends. */
  function run(spec: GenerateJobSpec, piece: (text: string) => void, signal: AbortSignal | undefined, onRate: WorkerBackendHooks['onRate']): Promise<Outcome> {
    const { jobId, outcome } = client.run(spec, {
      onText: piece,
      onProgress(p) {
        if (p.kind === 'model') hooks.onModel?.(p.model);
        else if (p.kind === 'context') hooks.onContext?.(p.context);
        else onRate?.(p.tokens, p.ms);
      },
      ...(signal && { signal }),
    });
    hooks.onJob?.(jobId);
    return outcome;
  }

  /** Runs a job, once more with a dropped file's bytes when the worker does not hold it. */
  async function attempt(
    make: (m: WorkerModel) => GenerateJobSpec,
    piece: (text: string) => void,
    signal?: AbortSignal,
    onRate = hooks.onRate,
  ): Promise<Outcome> {
    const first = await run(make(model(false)), piece, signal, onRate);
    if (first.state !== 'failed' || first.error.message !== MODEL_NOT_LOADED) return first;
    return run(make(model(true)), piece, signal, onRate);
  }

  return {
    name,
    get last() {
      return last;
    },
    async load() {
      const o = await attempt(
        (m) => ({ kind: 'generate', ...m }),
        () => {},
      );
      if (o.state === 'failed') throw o.error;
      if (o.state === 'stopped' || 'released' in o.result) throw new JobError('The model load was stopped.', 'user');
      return o.result.model;
    },
    async *generate(request: GenerateRequest, o: GenerateOptions) {
      if (!isTurnRequest(request)) throw new Error(`${name}: the Playground sends a model in the worker turn requests only`);
      const sampling = {
        maxTokens: o.maxTokens,
        temperature: o.temperature,
        ...(o.topK !== undefined && { topK: o.topK }),
        ...(o.topP !== undefined && { topP: o.topP }),
        ...(o.seed !== undefined && { seed: o.seed }),
      };
      const chosen = template?.();
      // Pieces arrive from the worker as events; the generator hands them out in order.
      const queue: string[] = [];
      let wake: (() => void) | null = null;
      let ended = false;
      let tokens = 0;
      const onRate = (n: number, ms: number) => {
        tokens = n;
        o.onTokens?.(n);
        hooks.onRate?.(n, ms);
      };
      last = null;
      const job = attempt(
        (m) => ({ kind: 'generate', ...m, request: request as TurnRequest, ...(chosen && m.model.kind === 'checkpoint' && { template: chosen }), sampling }),
        (text) => {
          queue.push(text);
          wake?.();
        },
        o.signal,
        onRate,
      ).finally(() => {
        ended = true;
        wake?.();
      });
      for (;;) {
        while (queue.length) yield queue.shift()!;
        if (ended) break;
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
      const out = await job;
      while (queue.length) yield queue.shift()!;
      if (out.state === 'failed') throw out.error;
      if (out.state === 'done' && !('released' in out.result)) {
        last = out.result;
        if (out.result.tokens !== undefined && out.result.tokens !== tokens) o.onTokens?.(out.result.tokens);
      }
    },
  };
}
