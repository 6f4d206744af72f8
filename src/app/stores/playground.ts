// The Playground's state: the session (src/envs/session.ts), the chosen backend and
// sampling settings, and the generation in flight. A checkpoint runs in the jobs worker (the
// 'generate' job, src/jobs/playground.ts), which keeps it loaded between turns; an endpoint and
// the baselines run on the page. The session persists in localStorage, so a reload, a lost GPU
// device or a failed request never loses the turns played; API keys never enter it. A Hugging Face
// folder (stores/hfFolders.ts) also runs in the worker, its File objects sent with each job; like a
// dropped file it is not persisted. So does an ONNX folder (stores/onnxFolders.ts), in
// onnxruntime-web: WebGPU where the page has it, else WASM, so it needs no WebGPU.
import { create, type StoreApi, type UseBoundStore } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import { copyLastBackend, referenceBackend } from '../../backends/baselines.ts';
import { EndpointError, endpointBackend } from '../../backends/endpoint.ts';
import type { LwmBackend, TurnRequest } from '../../core/backend.ts';
import { awbMessages } from '../../core/bench/awbLayout.ts';
import { decorateAction, decorateObservation } from '../../core/formats/agentworldbench.ts';
import { estimatedReport, type ContextReport } from '../../core/playground/context.ts';
import {
  addTurn,
  branchAt,
  clearFrom,
  newSession,
  pendingTurns,
  sessionTrajectory,
  setField as setSessionField,
  setPrediction,
  suggestAction,
  switchBranch as switchSessionBranch,
  turnRequest,
  type HistoryMode,
  type Session,
  type World,
} from '../../envs/session.ts';
import type { SystemPrompt, Trajectory } from '../../core/schema/types.ts';
import { renderSystem, type PromptTemplate } from '../../core/templates/index.ts';
import type { DatasetMeta } from '../../core/records.ts';
import { appendTrajectories } from '../../storage/datasets.ts';
import { JobError, missingWebGpu, type JobClient } from '../../jobs/client.ts';
import type { GenerateJobSpec, PlaygroundModelInfo } from '../../jobs/playground.ts';
import { workerBackend, type WorkerBackend } from '../../jobs/workerBackend.ts';
import { FILE_KEY_PREFIX } from '../../core/backendRef.ts';
import { endpointConfig, endpointProblems, useEndpointStore, type EndpointSettings } from './endpoints.ts';
import { useHfFolderStore, type PickedFolder } from './hfFolders.ts';
import { chosenFile, pageExecution, useOnnxFolderStore } from './onnxFolders.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import type { OnnxExecution } from '../../jobs/onnxFolder.ts';
import { jobClient } from './jobClient.ts';
import { CHECKPOINT_HELP, corsHelp, pageOrigin } from '../lib/backendHelp.ts';

export type BackendChoice =
  | { kind: 'run'; key: string; label: string }
  | { kind: 'file'; id: string; name: string }
  /** A Hugging Face folder picked in this page (stores/hfFolders.ts, by its id). */
  | { kind: 'hf'; id: string; name: string }
  /** An ONNX folder picked in this page (stores/onnxFolders.ts, by its id), run by onnxruntime-web. */
  | { kind: 'onnx'; id: string; name: string }
  | { kind: 'endpoint'; id: string }
  | { kind: 'copy-last' }
  | { kind: 'reference' };

export interface Sampling {
  temperature: number;
  topK: number | null;
  topP: number | null;
  maxTokens: number;
  seed: number | null;
}

export const DEFAULT_SAMPLING: Sampling = { temperature: 0, topK: null, topP: null, maxTokens: 48, seed: 0 };

export type PlaygroundErrorKind = 'endpoint' | 'cors' | 'checkpoint' | 'folder' | 'device-lost' | 'context' | 'no-webgpu' | 'settings' | 'storage' | 'other';

export interface PlaygroundError {
  kind: PlaygroundErrorKind;
  message: string;
  /** More to read: what CORS is and how to allow it, how to get WebGPU. */
  help?: string;
  /** The turn it happened at (0-based), when it was a generation. */
  turn?: number;
}

export interface LiveGeneration {
  turn: number;
  text: string;
  tokens: number;
  ms: number;
  /** Stream pieces count as tokens for an endpoint (exact for a checkpoint). */
  exact: boolean;
  jobId?: string;
}

/** What the store needs of the world outside: the worker, endpoint settings, storage. */
export interface PlaygroundDeps {
  jobs(): JobClient;
  endpoint(id: string): EndpointSettings | undefined;
  /** The page's WebGPU problem, or null (missingWebGpu in the page). */
  webgpu(): { message: string; help: string } | null;
  save(meta: Omit<DatasetMeta, 'turns' | 'domains' | 'chunks' | 'trajectories'>, t: Trajectory[]): Promise<DatasetMeta>;
  now(): number;
  /** A Hugging Face folder picked in this page (its files and run settings). */
  folder?(id: string): PickedFolder | undefined;
  /** An ONNX folder picked in this page (its files and chosen model file), and where onnxruntime-web runs it. */
  onnxFolder?(id: string): { id: string; name: string; files: HfFolderFile[]; file: string | null } | undefined;
  onnxExecution?(): OnnxExecution;
}

export const PLAYGROUND_DATASET_ID = 'playground-sessions';
export const PLAYGROUND_DATASET_NAME = 'Playground sessions';

export interface PlaygroundState {
  session: Session;
  backend: BackendChoice | null;
  sampling: Sampling;
  /** A template version to render with ('' = the checkpoint's trained one; for endpoints, the AgentWorldBench layout). */
  template: string;
  /** The model the worker has loaded (checkpoints). */
  model: PlaygroundModelInfo | null;
  live: LiveGeneration | null;
  /** The context bar of the latest generation (or of the next turn's estimate). */
  context: ContextReport | null;
  error: PlaygroundError | null;
  /** The last save: where to find the session. */
  saved: { datasetId: string; trajectoryId: string; datasetName: string } | null;
  suggestion: { text: string; variant: number } | null;

  setWorld(world: World): void;
  setField(field: keyof SystemPrompt, value: string): void;
  /** Back to the world's own system prompt. */
  resetFields(): void;
  setMode(mode: HistoryMode): void;
  setBackend(b: BackendChoice | null, file?: Uint8Array): void;
  setSampling(s: Partial<Sampling>): void;
  setTemplate(version: string, templates: Record<string, PromptTemplate>): void;
  suggest(): string | null;
  /** Plays an action: the real observation at once, the model's prediction streamed. */
  send(action: string): Promise<void>;
  /** Predicts every turn from `from` on that has no prediction yet. */
  runPending(from?: number): Promise<void>;
  /** Drops the predictions from `from` on and makes them again (mode, backend or prompt changed). */
  rerunFrom(from: number): Promise<void>;
  stop(): void;
  /** Edits turn `index`'s action and re-runs from there; the old branch is kept. */
  editAction(index: number, action: string, keepLater: boolean): Promise<void>;
  switchBranch(k: number): void;
  reset(): void;
  save(datasetId?: string, datasetName?: string): Promise<void>;
  dismissError(): void;
  /** Frees the loaded model's GPU memory (leaving the view). */
  release(): void;
}

export { corsHelp };

/** A thrown error as the user sees it. */
export function classifyError(e: unknown, turn: number | undefined, lostDuringJob: boolean, origin: string): PlaygroundError {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof EndpointError) {
    if (e.kind === 'cors') return { kind: 'cors', message: `The endpoint could not be reached from this page: ${message}`, help: corsHelp(origin), turn };
    if (e.kind === 'unreachable') return { kind: 'endpoint', message: `The endpoint is unreachable: ${message}`, help: corsHelp(origin), turn };
    return { kind: 'endpoint', message: `The endpoint failed: ${message}`, turn };
  }
  // A job in the worker says what kind of failure it was; only an error of the page is read by its words.
  if (e instanceof JobError && !e.lost && e.kind !== 'device-lost') {
    if (e.kind === 'checkpoint') return { kind: 'checkpoint', message, help: CHECKPOINT_HELP, turn };
    if (e.kind === 'folder') return { kind: 'folder', message, turn };
    if (e.kind === 'settings') return { kind: 'context', message, turn };
    if (e.kind === 'no-webgpu') return { kind: 'no-webgpu', message, turn };
    if (e.kind === 'storage') return { kind: 'storage', message, turn };
    return { kind: 'other', message, turn };
  }
  if ((e instanceof JobError && (e.lost || e.kind === 'device-lost')) || lostDuringJob || /device was lost|device lost|GPU worker stopped/i.test(message)) {
    return {
      kind: 'device-lost',
      message: `The GPU device was lost during generation (${message.replace(/\s*The job stopped;.*$/s, '')}). The session and its history are kept, with the text generated so far; run the turn again to load the model on a fresh device.`,
      turn,
    };
  }
  if (/no tokenizer|not an LWM Studio checkpoint|no template|could not be read from browser storage|safetensors|checkpoint/i.test(message))
    return { kind: 'checkpoint', message, help: CHECKPOINT_HELP, turn };
  if (/leaves? no room for (the|a) prompt/.test(message)) return { kind: 'context', message, turn };
  if (/WebGPU/.test(message)) return { kind: 'no-webgpu', message, turn };
  return { kind: 'other', message, turn };
}

/** A template's rendering of the system prompt as the endpoint's system message (AgentWorldBench layout otherwise). */
function endpointRequest(req: TurnRequest, template: PromptTemplate | undefined): TurnRequest {
  if (!template) return req;
  const { sample } = req;
  return {
    ...req,
    awb: {
      system: renderSystem(template, sample),
      actions: [...sample.history.map((h, i) => decorateAction(h.action, i + 1)), decorateAction(sample.action, sample.history.length + 1)],
      observations: sample.history.map((h) => decorateObservation(h.observation)),
    },
  };
}

export function backendLabel(b: BackendChoice | null, model: PlaygroundModelInfo | null, endpoint?: EndpointSettings): string {
  if (!b) return 'no backend';
  switch (b.kind) {
    case 'run':
    case 'file':
    case 'hf':
    case 'onnx':
      return isLoaded(b, model) ? model!.name : b.kind === 'run' ? b.label : b.kind === 'hf' || b.kind === 'onnx' ? `${b.kind}:${b.name}` : b.name;
    case 'endpoint':
      return endpoint ? `endpoint:${endpoint.model}` : 'endpoint';
    default:
      return b.kind;
  }
}

type SetState = StoreApi<PlaygroundState>['setState'];
type GetState = StoreApi<PlaygroundState>['getState'];
type LocalChoice = Extract<BackendChoice, { kind: 'run' | 'file' | 'hf' | 'onnx' }>;

/** Choices that run in the worker (on the GPU; an ONNX folder in onnxruntime-web). */
export function isLocalChoice(b: BackendChoice | null): b is LocalChoice {
  return b?.kind === 'run' || b?.kind === 'file' || b?.kind === 'hf' || b?.kind === 'onnx';
}

/** Why the chosen backend cannot run in this page (a checkpoint or a Hugging Face folder without WebGPU), or null: an ONNX folder falls back to WASM. */
function gpuProblem(deps: PlaygroundDeps, b: LocalChoice): { message: string; help: string } | null {
  const problem = b.kind === 'onnx' ? null : deps.webgpu();
  if (!problem) return null;
  return { message: `${b.kind === 'hf' ? 'A Hugging Face model' : 'A checkpoint'} runs on the GPU, and ${problem.message}`, help: problem.help };
}

/** Whether the worker's model is the one chosen (a folder with any run settings; the model's id is src/core/backendRef.ts's backendKey). */
export function isLoaded(b: BackendChoice | null, model: PlaygroundModelInfo | null): boolean {
  if (!model || !isLocalChoice(b)) return false;
  if (b.kind === 'hf' || b.kind === 'onnx') return model.id.startsWith(`${b.kind}:${b.id}:`);
  return model.id.startsWith(`checkpoint:${b.kind === 'run' ? b.key : `${FILE_KEY_PREFIX}${b.id}`}:`);
}

/** What a generate job is told to load for a choice (src/core/backendRef.ts), with the files it needs; a folder no longer picked in this page is an error saying so. */
function localModel(
  { deps, v }: StoreCtx,
  b: LocalChoice,
  withBytes: boolean,
): Pick<Extract<GenerateJobSpec, { model: unknown }>, 'model' | 'files' | 'bytes'> {
  if (b.kind === 'run') return { model: { kind: 'checkpoint', checkpoint: { key: b.key, label: b.label } } };
  if (b.kind === 'file') {
    const bytes = withBytes || v.workerHasFile !== b.id ? (v.fileBytes?.id === b.id ? v.fileBytes.bytes : undefined) : undefined;
    return { model: { kind: 'checkpoint', checkpoint: { key: `${FILE_KEY_PREFIX}${b.id}`, label: b.name } }, ...(bytes && { bytes }) };
  }
  const gone = () =>
    Object.assign(new Error(`The folder ${b.name} is no longer open in this page: pick the folder again (folders are not kept after a reload).`), {
      kindHint: 'folder',
    });
  if (b.kind === 'onnx') {
    const o = deps.onnxFolder?.(b.id);
    if (!o) throw gone();
    return {
      model: { kind: 'onnx', onnx: { folderId: o.id, name: o.name, ...(o.file !== null && { file: o.file }), execution: deps.onnxExecution?.() ?? 'auto' } },
      files: o.files,
    };
  }
  const f = deps.folder?.(b.id);
  if (!f) throw gone();
  return { model: { kind: 'hf', hf: { folderId: f.id, name: f.name, ...f.settings } }, files: f.files };
}
type TurnOutput = { text: string; tokens: number; ms: number; stopped: boolean; name: string };

/** What one store keeps outside its state: the dropped file's bytes (never persisted), the run in flight. */
interface StoreVars {
  fileBytes: { id: string; bytes: Uint8Array } | null;
  /** The file id the worker already holds. */
  workerHasFile: string | null;
  abort: AbortController | null;
  templates: Record<string, PromptTemplate>;
  /** Bumped by reset / world changes: a run that started before stops writing into the new session. */
  epoch: number;
  running: Promise<void> | null;
}

/** Everything the store's named functions share. */
interface StoreCtx {
  deps: PlaygroundDeps;
  set: SetState;
  get: GetState;
  v: StoreVars;
}

function chosenTemplate({ get, v }: StoreCtx): PromptTemplate | undefined {
  return get().template ? v.templates[get().template] : undefined;
}

function samplingOptions(s: Sampling) {
  return {
    maxTokens: s.maxTokens,
    temperature: s.temperature,
    ...(s.topK !== null ? { topK: s.topK } : {}),
    ...(s.topP !== null ? { topP: s.topP } : {}),
    ...(s.seed !== null ? { seed: s.seed } : {}),
  };
}

/** The worker's model for a local choice, as a backend (src/jobs/workerBackend.ts): its progress goes to the store. */
function workerModel(ctx: StoreCtx, b: LocalChoice, turn?: number): WorkerBackend {
  const { deps, set, get, v } = ctx;
  const live = (patch: Partial<LiveGeneration>) => {
    const l = get().live;
    if (l && l.turn === turn) set({ live: { ...l, ...patch } });
  };
  return workerBackend(
    deps.jobs(),
    backendLabel(b, get().model),
    (withBytes) => localModel(ctx, b, withBytes),
    {
      onModel: (model) => {
        set({ model });
        if (b.kind === 'file') v.workerHasFile = b.id;
      },
      onContext: (context) => set({ context }),
      onJob: (jobId) => live({ jobId }),
      onRate: (tokens, ms) => live({ tokens, ms }),
    },
    () => (b.kind === 'hf' || b.kind === 'onnx' ? undefined : chosenTemplate(ctx)),
  );
}

/** One turn from any backend (the worker's model, an endpoint, a baseline), streamed into `live`. */
async function generateTurn(ctx: StoreCtx, turn: number, backend: LwmBackend, request: TurnRequest, worker: WorkerBackend | null): Promise<TurnOutput> {
  const { set, get, v } = ctx;
  v.abort = new AbortController();
  const signal = v.abort.signal;
  const t0 = performance.now();
  let text = '';
  let pieces = 0;
  set({ live: { turn, text: '', tokens: 0, ms: 0, exact: worker !== null } });
  try {
    for await (const piece of backend.generate(request, { ...samplingOptions(get().sampling), signal })) {
      text += piece;
      pieces++;
      const live = get().live;
      // A worker model counts its tokens and times them itself (onRate); a page backend's pieces stand in for tokens.
      set({ live: worker ? { ...live!, text } : { turn, text, tokens: pieces, ms: performance.now() - t0, exact: false } });
    }
  } catch (e) {
    const live = get().live;
    const err = e as Error & { lost?: boolean };
    if (!signal.aborted || worker)
      throw Object.assign(err, {
        partial: text,
        tokens: worker ? (live?.tokens ?? 0) : pieces,
        ms: worker ? (live?.ms ?? 0) : performance.now() - t0,
        lost: err.lost,
      });
  } finally {
    v.abort = null;
  }
  if (worker) {
    const r = worker.last;
    const live = get().live;
    return {
      text: r?.text ?? text,
      tokens: r?.tokens ?? live?.tokens ?? 0,
      ms: r?.ms ?? live?.ms ?? 0,
      stopped: !r || !!r.stopped,
      name: r?.model.name ?? get().model?.name ?? 'local',
    };
  }
  return { text, tokens: pieces, ms: performance.now() - t0, stopped: signal.aborted, name: backend.name };
}

/** The backend for the choice (a worker model: null here, made per turn), the request it gets, or the settings problem that stops the turn. */
function pageBackend(ctx: StoreCtx, b: BackendChoice, request: TurnRequest): { backend: LwmBackend | null; request: TurnRequest } | { problem: string } {
  const { deps, set, get } = ctx;
  if (b.kind === 'endpoint') {
    const ep = deps.endpoint(b.id);
    if (!ep) return { problem: 'The chosen endpoint is no longer set up; choose or add one.' };
    const problems = endpointProblems(ep);
    if (problems.length) return { problem: problems.join(' ') };
    const req = endpointRequest(request, chosenTemplate(ctx));
    set({ context: estimatedReport(awbMessages(req), ep.contextLength, get().sampling.maxTokens) });
    return { backend: endpointBackend(endpointConfig(ep)), request: req };
  }
  if (b.kind === 'copy-last') return { backend: copyLastBackend(), request };
  if (b.kind === 'reference') {
    if (request.reference === undefined)
      return {
        problem: 'The reference baseline answers with the real observation, and a free world has none; choose another backend or a built-in environment.',
      };
    return { backend: referenceBackend(), request };
  }
  // A Hugging Face or ONNX model is sent the endpoint's message layout (rendered with its chat template in the worker).
  if (b.kind === 'hf' || b.kind === 'onnx') return { backend: null, request: endpointRequest(request, chosenTemplate(ctx)) };
  return { backend: null, request };
}

/** Predicts turn `index`; false when it failed, stopped or the session changed under it. */
async function runTurn(ctx: StoreCtx, index: number): Promise<boolean> {
  const { deps, set, get, v } = ctx;
  const { backend: b, session } = get();
  if (!b) {
    set({ error: { kind: 'settings', message: 'Choose a backend first: a checkpoint, an endpoint or a baseline.' } });
    return false;
  }
  const myEpoch = v.epoch;
  const chosen = pageBackend(ctx, b, turnRequest(session, index));
  if ('problem' in chosen) {
    set({ error: { kind: 'settings', message: chosen.problem } });
    return false;
  }
  const { backend, request } = chosen;
  if (backend) set({ context: b.kind === 'endpoint' ? get().context : null });
  set({ error: null });
  try {
    let out: TurnOutput;
    if (backend) out = await generateTurn(ctx, index, backend, request, null);
    else {
      const local = b as LocalChoice;
      const problem = gpuProblem(deps, local);
      if (problem) throw Object.assign(new Error(problem.message), { help: problem.help, kindHint: 'no-webgpu' });
      const worker = workerModel(ctx, local, index);
      out = await generateTurn(ctx, index, worker, request, worker);
    }
    if (myEpoch !== v.epoch) return false;
    set({
      session: setPrediction(get().session, index, out.text, { backend: out.name, tokens: out.tokens, ms: out.ms, ...(out.stopped ? { stopped: true } : {}) }),
      live: null,
    });
    return !out.stopped;
  } catch (e) {
    if (myEpoch !== v.epoch) return false;
    const err = e as Error & { partial?: string; lost?: boolean; tokens?: number; ms?: number; help?: string; kindHint?: string };
    const shown: PlaygroundError =
      err.kindHint === 'no-webgpu'
        ? { kind: 'no-webgpu', message: err.message, help: err.help, turn: index }
        : forChoice(b, classifyError(err, index, !!err.lost, pageOrigin()));
    set({
      session: setPrediction(get().session, index, err.partial ?? '', {
        backend: backendLabel(b, get().model, b.kind === 'endpoint' ? deps.endpoint(b.id) : undefined),
        tokens: err.tokens ?? 0,
        ms: err.ms ?? 0,
        error: shown.message,
      }),
      live: null,
      error: shown,
    });
    return false;
  }
}

/** A Hugging Face folder's failures (a file missing or broken, a model that does not fit) are the folder's. */
function forChoice(b: BackendChoice, e: PlaygroundError): PlaygroundError {
  // A folder's failure is the folder's: the checkpoint help (tokenizer and template kept inside it) does not apply.
  return (b.kind === 'hf' || b.kind === 'onnx') && (e.kind === 'checkpoint' || e.kind === 'other') ? { ...e, kind: 'folder', help: undefined } : e;
}

/** Predicts every turn from `from` on that has no prediction yet, one run at a time. */
function runPending(ctx: StoreCtx, from = 0): Promise<void> {
  const { get, v } = ctx;
  if (v.running) return v.running;
  v.running = (async () => {
    try {
      for (;;) {
        const next = pendingTurns(get().session, from)[0];
        if (next === undefined) return;
        const ok = await runTurn(ctx, next);
        if (!ok) return;
        from = next + 1;
      }
    } finally {
      v.running = null;
    }
  })();
  return v.running;
}

/** Loads a checkpoint in the worker as soon as it is chosen, so the first turn does not wait and the user sees what was loaded (or why not). */
function preloadModel(ctx: StoreCtx, b: LocalChoice) {
  const { deps, set, get } = ctx;
  const problem = gpuProblem(deps, b);
  if (problem) {
    set({ error: { kind: 'no-webgpu', message: problem.message, help: problem.help } });
    return;
  }
  workerModel(ctx, b)
    .load()
    .catch((e: Error & { kindHint?: string }) => {
      if (get().backend !== b) return;
      set({
        error: e.kindHint === 'folder' ? { kind: 'folder', message: e.message } : forChoice(b, classifyError(e, undefined, false, pageOrigin())),
        model: null,
      });
    });
}

/** The session's own edits: world, system prompt, mode, suggestions, reset. */
function sessionActions({ set, get, v }: StoreCtx) {
  return {
    setWorld(world: World) {
      v.epoch++;
      get().stop();
      set({ session: newSession(world, get().session.mode), live: null, context: null, saved: null, suggestion: null, error: null });
    },
    setField(field: keyof SystemPrompt, value: string) {
      set({ session: setSessionField(get().session, field, value) });
    },
    resetFields() {
      set({ session: { ...get().session, systemPrompt: newSession(get().session.world).systemPrompt } });
    },
    setMode(mode: HistoryMode) {
      set({ session: { ...get().session, mode } });
    },
    suggest() {
      const { session, suggestion } = get();
      const variant = suggestion ? suggestion.variant + 1 : 0;
      const text = suggestAction(
        session.world,
        session.turns.map((t) => t.action),
        suggestion ? variant : 0,
      );
      set({ suggestion: text === null ? null : { text, variant } });
      return text;
    },
    reset() {
      v.epoch++;
      get().stop();
      const s = get().session;
      set({ session: { ...newSession(s.world, s.mode), systemPrompt: s.systemPrompt }, live: null, context: null, saved: null, suggestion: null, error: null });
    },
    dismissError() {
      set({ error: null });
    },
  };
}

/** Backend, sampling and template choices, and freeing the loaded model. */
function backendActions(ctx: StoreCtx) {
  const { deps, set, get, v } = ctx;
  return {
    setBackend(b: BackendChoice | null, file?: Uint8Array) {
      if (b?.kind === 'file' && file) v.fileBytes = { id: b.id, bytes: file };
      set({ backend: b, error: null, context: null });
      if (isLocalChoice(b)) preloadModel(ctx, b);
    },
    setSampling(s: Partial<Sampling>) {
      set({ sampling: { ...get().sampling, ...s } });
    },
    setTemplate(version: string, known: Record<string, PromptTemplate>) {
      v.templates = known;
      set({ template: version });
    },
    release() {
      const b = get().backend;
      if (!isLocalChoice(b) || gpuProblem(deps, b)) return;
      deps.jobs().start({ kind: 'generate', release: true });
      v.workerHasFile = null;
      set({ model: null });
    },
  };
}

/** Playing turns: send, re-run, stop, edit and branch. */
function runActions(ctx: StoreCtx) {
  const { set, get, v } = ctx;
  return {
    async send(action: string) {
      if (!action.trim()) return;
      set({ session: addTurn(get().session, action), suggestion: null, saved: null });
      // Earlier turns left without a prediction (a failed request, a lost device) run first: the new turn's history needs them.
      await runPending(ctx, 0);
    },
    runPending: (from?: number) => runPending(ctx, from),
    async rerunFrom(from: number) {
      set({ session: clearFrom(get().session, from) });
      await runPending(ctx, from);
    },
    stop() {
      // A worker model's generation asks the worker to stop when its signal aborts.
      v.abort?.abort(new Error('stopped'));
    },
    async editAction(index: number, action: string, keepLater: boolean) {
      if (v.running) return;
      set({ session: branchAt(get().session, index, action, keepLater), saved: null });
      await runPending(ctx, index);
    },
    switchBranch(k: number) {
      if (v.running) return;
      set({ session: switchSessionBranch(get().session, k) });
    },
  };
}

/** Saves the session as one trajectory of a dataset. */
async function saveSession({ deps, set, get }: StoreCtx, datasetId: string, datasetName: string) {
  const s = get().session;
  if (!s.turns.some((t) => t.real || t.prediction)) {
    set({ error: { kind: 'settings', message: 'Nothing to save yet: play at least one turn.' } });
    return;
  }
  const now = deps.now();
  const id = `play-${s.world.domain}-${now.toString(36)}`;
  try {
    await deps.save({ id: datasetId, name: datasetName, createdAt: now, origin: 'playground', formats: ['native'], files: [], errorCount: 0 }, [
      sessionTrajectory(s, id, now),
    ]);
    set({ saved: { datasetId, trajectoryId: id, datasetName }, error: null });
  } catch (e) {
    set({ error: { kind: 'storage', message: `The session could not be saved: ${(e as Error).message}` } });
  }
}

export function createPlaygroundStore(deps: PlaygroundDeps, persistKey: string | null): UseBoundStore<StoreApi<PlaygroundState>> {
  const v: StoreVars = { fileBytes: null, workerHasFile: null, abort: null, templates: {}, epoch: 0, running: null };

  const init = (set: SetState, get: GetState): PlaygroundState => {
    const ctx: StoreCtx = { deps, set, get, v };
    return {
      session: newSession({ kind: 'env', domain: 'terminal', seed: 1 }),
      backend: null,
      sampling: { ...DEFAULT_SAMPLING },
      template: '',
      model: null,
      live: null,
      context: null,
      error: null,
      saved: null,
      suggestion: null,
      ...sessionActions(ctx),
      ...backendActions(ctx),
      ...runActions(ctx),
      save: (datasetId = PLAYGROUND_DATASET_ID, datasetName = PLAYGROUND_DATASET_NAME) => saveSession(ctx, datasetId, datasetName),
    };
  };

  if (!persistKey) return create<PlaygroundState>()(init);
  return create<PlaygroundState>()(
    persist(init, {
      name: persistKey,
      version: 1,
      storage: createJSONStorage(() => localStorage),
      // The session and settings; never file bytes or keys. A dropped file or a picked folder is not kept (its bytes are gone after a reload).
      partialize: (s) => ({
        session: s.session,
        backend: s.backend?.kind === 'file' || s.backend?.kind === 'hf' || s.backend?.kind === 'onnx' ? null : s.backend,
        sampling: s.sampling,
        template: s.template,
      }),
    }),
  );
}

/** The page's Playground: the jobs worker (started on first use), the endpoints store, IndexedDB. */
export const usePlaygroundStore = createPlaygroundStore(
  {
    jobs: jobClient,
    endpoint: (id) => useEndpointStore.getState().endpoints.find((e) => e.id === id),
    webgpu: missingWebGpu,
    save: appendTrajectories,
    now: () => Date.now(),
    folder: (id) => useHfFolderStore.getState().get(id),
    onnxFolder: (id) => {
      const f = useOnnxFolderStore.getState().get(id);
      return f && { id: f.id, name: f.name, files: f.files, file: chosenFile(f) };
    },
    onnxExecution: () => pageExecution(),
  },
  typeof localStorage === 'undefined' ? null : 'lwm.playground',
);
