// The 'optimize' job's logic without a worker: a stored optimization runs the loop over generated
// trajectories with the local judge and the offline optimizer; a stop part-way leaves a state
// that a second run resumes to the same end as an uninterrupted run, without scoring again what
// was scored; a template that cannot render is refused with the reason.
import { describe, expect, it } from 'vitest';
import { isTurnRequest, type GenerateRequest, type LwmBackend, type TurnRequest } from '../core/backend.ts';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { sampleFromRecord } from '../core/bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { templateRequest } from '../core/optimize/evaluate.ts';
import { offlineOptimizer } from '../core/optimize/optimizers.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import type { OptimizationRecord } from '../core/records.ts';
import { StopRequested } from '../train/context.ts';
import { backendFolderFiles, evaluationsDone, optimizationRender, runOptimize, type OptimizeDeps, type OptimizeProgress } from './optimize.ts';

const trajectories = [...generateTrajectories('terminal', 24, 3), ...generateTrajectories('mcp', 24, 3)];
const samples = benchSampleRecords(trajectories, { evalFraction: 0.5, seed: 1 }).map(sampleFromRecord);

function record(): OptimizationRecord {
  return {
    id: 'opt-1',
    name: 'test',
    createdAt: 1,
    updatedAt: 1,
    state: 'queued',
    start: { version: 'v0', template: structuredClone(BUILTIN_TEMPLATES.v0) },
    data: { datasetId: 'd', name: 'generated', domains: [], evalFraction: 0.5, seed: 1, devPerDomain: 5, testPerDomain: 3 },
    backend: { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
    judge: { id: 'local-rubric', kind: 'local' },
    optimizer: { kind: 'offline' },
    generation: {},
    config: { rounds: 2, candidates: 2, margin: 0, level: 0.95, seed: 3 },
    loop: null,
  };
}

/** A simulator that answers with the real observation when its template asks it to compute counts from the state (one of the offline optimizer's instructions) on the terminal, and with the last observation otherwise. */
function obedient(calls: { n: number }): LwmBackend {
  return {
    name: 'obedient',
    async *generate(request: GenerateRequest) {
      calls.n++;
      const r = request as TurnRequest;
      const last = r.sample.history.at(-1)?.observation ?? '';
      const obeys = r.sample.domain === 'terminal' && /compute counts/i.test(r.template?.text ?? '');
      yield `<predicted_observation>\n${obeys ? r.reference : last}\n</predicted_observation>`;
    },
  };
}

function deps(store: Map<string, OptimizationRecord>, calls: { n: number }, o: { stopAfterStates?: number; progress?: OptimizeProgress[] } = {}): OptimizeDeps {
  const ctl = new AbortController();
  let states = 0;
  return {
    get: async (id) => structuredClone(store.get(id)),
    async update(id, change) {
      const r = structuredClone(store.get(id)!);
      change(r);
      store.set(id, r);
      return structuredClone(r);
    },
    loadSamples: async () => samples,
    openBackend: async () => ({ backend: obedient(calls), generate: { maxTokens: 64, temperature: 0 }, concurrency: 1, form: 'turn' as const, dispose() {} }),
    openJudge: () => ({ judge: localJudge, concurrency: 1 }),
    optimizer: () => offlineOptimizer(),
    signal: ctl.signal,
    progress(p) {
      o.progress?.push(p);
      if (p.phase === 'state' && ++states === o.stopAfterStates) ctl.abort(new StopRequested());
    },
    log() {},
    now: () => 0,
  };
}

describe('the optimize job', () => {
  it('runs the rounds, stores the lineage and the test score, and reports progress', async () => {
    const store = new Map([['opt-1', record()]]);
    const progress: OptimizeProgress[] = [];
    const result = await runOptimize('opt-1', deps(store, { n: 0 }, { progress }));
    const r = store.get('opt-1')!;
    expect(r.state).toBe('done');
    expect(result.rounds).toBe(2);
    expect(r.loop!.rounds.map((x) => x.round)).toEqual([1, 2]);
    const best = r.loop!.versions.find((v) => v.id === r.loop!.best)!;
    expect(best.text).toMatch(/Compute counts/);
    expect(r.loop!.versions.filter((v) => v.round === 1).map((v) => v.status)).toEqual(['accepted', 'rejected']);
    expect(best.mean!).toBeGreaterThan(r.loop!.versions[0].mean! + 10);
    expect(r.loop!.test?.version).toBe(best.id);
    expect(progress.some((p) => p.phase === 'evaluate' && p.split === 'test')).toBe(true);
    expect(progress.at(-1)!.evaluations).toEqual({ done: 1 + 4 + 1, planned: 6 });
  });

  it('a stop leaves a state that a second run resumes to the same end, scoring nothing twice', async () => {
    const whole = new Map([['opt-1', record()]]);
    const wholeCalls = { n: 0 };
    await runOptimize('opt-1', deps(whole, wholeCalls));

    const store = new Map([['opt-1', record()]]);
    const calls = { n: 0 };
    // States: start scored, round 1 proposed, candidate 1 scored → stop during candidate 2.
    await expect(runOptimize('opt-1', deps(store, calls, { stopAfterStates: 3 }))).rejects.toBeInstanceOf(StopRequested);
    const cut = store.get('opt-1')!;
    expect(cut.state).toBe('stopped');
    expect(evaluationsDone(cut.loop)).toBe(2);
    expect(cut.loop!.pending).toHaveLength(1);
    const before = calls.n;
    await runOptimize('opt-1', deps(store, calls));
    const done = store.get('opt-1')!;
    expect(done.state).toBe('done');
    expect(JSON.parse(JSON.stringify(done.loop))).toEqual(JSON.parse(JSON.stringify(whole.get('opt-1')!.loop)));
    // The resumed run scored only what was left: the whole run's calls minus the two kept evaluations.
    const dev = done.loop!.config.devSize;
    expect(calls.n - before).toBe(wholeCalls.n - 2 * dev);
  });

  it('3 rounds with the same seed give the same lineage and scores twice; another seed proposes other candidates', async () => {
    const run = async (seed: number) => {
      const r = record();
      r.config = { ...r.config, rounds: 3, seed };
      const store = new Map([['opt-1', r]]);
      await runOptimize('opt-1', deps(store, { n: 0 }));
      return store.get('opt-1')!.loop!;
    };
    const a = await run(3);
    expect(a.rounds.map((x) => x.round)).toEqual([1, 2, 3]);
    expect(new Set(a.versions.filter((v) => v.mean !== undefined).map((v) => v.mean)).size).toBeGreaterThan(1);
    expect(JSON.stringify(await run(3))).toBe(JSON.stringify(a));
    const other = await run(11);
    expect(other.versions.map((v) => v.note)).not.toEqual(a.versions.map((v) => v.note));
  });

  it('a missing optimization and a dataset too small are errors that say what to do', async () => {
    await expect(runOptimize('nope', deps(new Map(), { n: 0 }))).rejects.toThrow(/no stored prompt optimization nope/);
    const small = record();
    small.data.domains = ['terminal'];
    const store = new Map([['opt-1', small]]);
    const d = deps(store, { n: 0 });
    d.loadSamples = async () => samples.slice(0, 1);
    await expect(runOptimize('opt-1', d)).rejects.toThrow(/needs at least 2/);
    expect(store.get('opt-1')!.state).toBe('failed');
    expect(store.get('opt-1')!.error).toMatch(/1 dev sample/);
  });
});

describe("rendering a candidate: core's templateRender in the form lwm optimize uses", () => {
  const dev = samples.filter((x) => x.history.length > 0).slice(0, 3);
  const text = `${BUILTIN_TEMPLATES.v0.text}\nCompute counts.`;
  const withBackend = (backend: OptimizationRecord['backend']) => ({ ...record(), backend });
  const endpoint = { id: 'e', name: 'e', kind: 'endpoint' as const, endpoint: { baseUrl: 'http://x/v1', model: 'm' } };
  const checkpoint = { id: 'c', name: 'c', kind: 'checkpoint' as const, checkpoint: { runId: 'r', runName: 'r', tag: 'last' as const, step: 1, key: 'k' } };
  it('a checkpoint and the baselines get the turn with the text as its template and no AgentWorldBench texts', () => {
    for (const backend of [checkpoint, record().backend]) {
      const turn = optimizationRender(withBackend(backend), { form: 'turn' })(text, dev[0]) as TurnRequest;
      expect(turn.template?.text).toBe(text);
      expect(turn.template?.domains).toBeUndefined();
      expect(turn.awb).toBeUndefined();
      expect(turn).toEqual(templateRequest(text, dev[0], 'turn'));
    }
  });
  it('an endpoint, and a folder with a chat template, get the rendered system text and the turns as user/assistant messages', () => {
    const world = text.replace('You are the environment.', 'You are the world.');
    const chat = optimizationRender(withBackend(endpoint), { form: 'chat' })(world, dev[0]) as {
      system: string;
      messages: { role: string; content: string }[];
    };
    expect(chat.system).toMatch(/^You are the world\./);
    expect(chat.messages.map((m) => m.role)).toEqual([...dev[0].history.flatMap(() => ['user', 'assistant']), 'user']);
    expect(chat.messages.at(-1)!.content).toBe(dev[0].action);
    expect(chat).toEqual(templateRequest(world, dev[0], 'chat'));
    // The opener decides a folder's form (src/backends/open.test.ts): a chat model gets the same messages.
    const hf = { id: 'h', name: 'h', kind: 'hf' as const, hf: { folderId: 'h', name: 'h', context: null, memoryGiB: 1 } };
    const onnx = { id: 'o', name: 'o', kind: 'onnx' as const, onnx: { folderId: 'o', name: 'o', execution: 'wasm' as const } };
    expect(optimizationRender(withBackend(hf), { form: 'chat' })(world, dev[0])).toEqual(chat);
    expect(optimizationRender(withBackend(onnx), { form: 'chat' })(world, dev[0])).toEqual(chat);
    // Our ONNX export has no chat template: it renders the turn with the template, as a checkpoint does.
    expect(isTurnRequest(optimizationRender(withBackend(onnx), { form: 'turn' })(world, dev[0]))).toBe(true);
  });
  it("keeps the start template's prediction tags", () => {
    const o = withBackend(checkpoint);
    o.start.template = { ...o.start.template, targetOpen: '<obs>\n', targetClose: '\n</obs>' };
    const turn = optimizationRender(o, { form: 'turn' })(text, dev[0]) as TurnRequest;
    expect([turn.template!.targetOpen, turn.template!.targetClose]).toEqual(['<obs>\n', '\n</obs>']);
  });
});

describe('a folder simulator: the files the page sent with the job', () => {
  const onnx = {
    id: 'onnx:TinyOnnx#y',
    name: 'onnx:TinyOnnx',
    kind: 'onnx' as const,
    onnx: { folderId: 'TinyOnnx#y', name: 'TinyOnnx', file: 'onnx/model.onnx', execution: 'wasm' as const },
  };
  const hf = {
    id: 'hf:Tiny#x',
    name: 'hf:Tiny',
    kind: 'hf' as const,
    hf: { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: 128, memoryGiB: 1 },
  };
  const files = [{ path: 'TinyOnnx/config.json', file: new Blob(['{}']) }];

  it('opens with the files of that very folder; other backends take none', () => {
    expect(backendFolderFiles(onnx, { id: 'TinyOnnx#y', files })).toBe(files);
    expect(backendFolderFiles({ id: 'copy-last', name: 'copy-last', kind: 'copy-last' }, undefined)).toBeUndefined();
  });

  it("none sent (a reload since), or another folder's, is an error that names the folder and says to pick it again", () => {
    expect(() => backendFolderFiles(onnx, undefined)).toThrow(
      /onnx:TinyOnnx: the folder TinyOnnx is not open in this page .*Pick the same folder again in the Optimize form \(Simulated model: an ONNX folder\), then resume/,
    );
    expect(() => backendFolderFiles(hf, { id: 'Other#z', files })).toThrow(/the folder Tiny is not open in this page.*a Hugging Face folder/);
  });
});
