// The 'bench' job's pipeline (runBench) without a worker, GPU or IndexedDB: the samples it
// takes, every prediction and judgement stored as it finishes, a stop mid-run and a resume that
// does only what is missing, a failed generation tried again, a second judge added later, and
// numbers equal to the CLI's protocol (inferRecords → judgeRecord → scoreJudged).
import { describe, expect, it } from 'vitest';
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../core/backend.ts';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { inferRecords } from '../core/bench/infer.ts';
import type { AwbPredictionRecord, AwbSampleRecord } from '../core/bench/records.ts';
import { judgeRecord, scoreJudged } from '../core/bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import type { Judge } from '../core/judge/types.ts';
import { copyLastBackend, referenceBackend } from '../backends/baselines.ts';
import type { BenchRecord, BenchResult } from '../core/records.ts';
import { EndpointError } from '../backends/endpoint.ts';
import { WebGPUUnavailableError } from '../gpu/errors.ts';
import { CheckpointError } from '../core/model/checkpoint.ts';
import { BackendFailed, backendProblem, openBenchBackend, openBenchJudge, runBench, stopWhenDown, type BenchDeps, type BenchProgress } from './bench.ts';
import { StopRequested } from '../train/context.ts';

/** A job context whose GPU is never there: baselines and endpoints must not ask for it. */
const NO_GPU = {
  gpu: (): Promise<never> => {
    throw new Error('this bench asked for the GPU');
  },
};

const trajectories = (['terminal', 'mcp', 'search'] as const).flatMap((d) => generateTrajectories(d, 10, 3));
const SAMPLES = benchSampleRecords(trajectories, { evalFraction: 0.3, seed: 0, perDomain: 4 });

function bench(extra: Partial<BenchRecord> = {}): BenchRecord {
  return {
    id: 'b1',
    name: 'test',
    createdAt: 0,
    updatedAt: 0,
    origin: 'run',
    state: 'queued',
    data: { datasetId: 'd', name: 'data', perDomain: 4, evalFraction: 0.3, seed: 0, domains: [] },
    samples: [],
    backends: [
      { id: 'model', name: 'model', kind: 'endpoint', endpoint: { baseUrl: 'http://x', model: 'm' } },
      { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
      { id: 'reference', name: 'reference', kind: 'reference' },
    ],
    judges: [{ id: 'local-rubric', kind: 'local' }],
    generation: {},
    progress: { done: 0, total: 0 },
    ...extra,
  };
}

/** A model that answers with the first line of the real observation (and fails where told). */
function halfModel(failOn: Set<number> = new Set()): LwmBackend {
  let calls = 0;
  return {
    name: 'model',
    async *generate(req: GenerateRequest, o: GenerateOptions) {
      const n = calls++;
      if (o.signal?.aborted) throw o.signal.reason;
      if (failOn.has(n)) throw new Error('the model fell over');
      const ref = 'sample' in req ? (req.reference ?? '') : '';
      yield `<predicted_observation>\n${ref.split('\n')[0]}\n</predicted_observation>`;
    },
  };
}

async function drain(b: LwmBackend): Promise<string> {
  let out = '';
  for await (const piece of b.generate({ prompt: 'x' }, { maxTokens: 1, temperature: 0 })) out += piece;
  return out;
}

function memoryDeps(b: BenchRecord, model: () => LwmBackend, extra: Partial<BenchDeps> = {}) {
  const store = { bench: structuredClone(b), results: new Map<string, BenchResult>(), progress: [] as BenchProgress[], opened: [] as string[] };
  const stop = new AbortController();
  const deps: BenchDeps = {
    getBench: async () => structuredClone(store.bench),
    updateBench: async (_id, change) => {
      change(store.bench);
      return structuredClone(store.bench);
    },
    loadResults: async () => [...store.results.values()].map((r) => structuredClone(r)),
    putResults: async (rs) => rs.forEach((r) => store.results.set(`${r.backend}#${r.index}`, structuredClone(r))),
    loadSamples: async (x) =>
      benchSampleRecords(trajectories, { evalFraction: x.data.evalFraction, seed: x.data.seed, perDomain: x.data.perDomain ?? undefined }),
    openBackend: async (ref, x) => {
      store.opened.push(ref.id);
      if (ref.kind === 'endpoint') return { backend: model(), generate: { maxTokens: 8, temperature: 0 }, concurrency: 2, form: 'chat' as const, dispose() {} };
      return openBenchBackend(ref, x, NO_GPU, undefined);
    },
    openJudge: (ref) => openBenchJudge(ref, undefined),
    step: async () => {
      if (stop.signal.aborted) throw new StopRequested();
    },
    signal: stop.signal,
    progress: (p) => store.progress.push(p),
    log: () => {},
    ...extra,
  };
  return { store, deps, stop };
}

describe('bench samples', () => {
  it('takes N held-out turns per domain, only from eval-split trajectories, the same every time', () => {
    const byDomain = new Map<string, number>();
    for (const r of SAMPLES) byDomain.set(r.task, (byDomain.get(r.task) ?? 0) + 1);
    expect(Object.fromEntries(byDomain)).toEqual({ terminal: 4, mcp: 4, search: 4 });
    const all = benchSampleRecords(trajectories, { evalFraction: 0.3, seed: 0 });
    const held = new Set(all.map((r) => String(r.id).replace(/_t\d+$/, '')));
    expect(held.size).toBe(9); // 30% of 10 per domain
    for (const r of SAMPLES) expect(held.has(String(r.id).replace(/_t\d+$/, ''))).toBe(true);
    // Order-independent and reproducible; another seed draws other turns.
    expect(
      benchSampleRecords([...trajectories].reverse(), { evalFraction: 0.3, seed: 0, perDomain: 4 })
        .map((r) => r.id)
        .sort(),
    ).toEqual(SAMPLES.map((r) => r.id).sort());
    expect(benchSampleRecords(trajectories, { evalFraction: 0.3, seed: 1, perDomain: 4 }).map((r) => r.id)).not.toEqual(SAMPLES.map((r) => r.id));
    expect(benchSampleRecords(trajectories, { evalFraction: 0.3, seed: 0, perDomain: 4, domains: ['mcp'] }).map((r) => r.id)).toEqual(
      SAMPLES.filter((r) => r.task === 'mcp').map((r) => r.id),
    );
  });
});

describe('runBench', () => {
  it('runs every backend and judge, stores each result, and scores as the CLI protocol does', async () => {
    const { store, deps } = memoryDeps(bench(), () => halfModel());
    const out = await runBench('b1', deps);
    expect(out).toEqual({ benchId: 'b1', done: 12 * 3 * 2, total: 72, failed: 0 });
    expect(store.bench.state).toBe('done');
    expect(store.bench.samples.map((s) => s.id)).toEqual(SAMPLES.map((s) => s.id));
    expect(store.bench.progress).toEqual({ done: 72, total: 72 });
    expect(store.results.size).toBe(36);
    // Progress: monotone, with an estimate once something was measured, and every result sent.
    const dones = store.progress.map((p) => p.done);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    expect(store.progress.flatMap((p) => p.results).length).toBe(72);
    expect(store.progress.at(-1)!.etaMs).toBe(0);

    // The same numbers as lwm infer → lwm judge → lwm score on the same records.
    for (const [id, backend] of [
      ['copy-last', copyLastBackend()],
      ['reference', referenceBackend()],
      ['model', halfModel()],
    ] as const) {
      const preds: AwbPredictionRecord[] = [];
      await inferRecords(SAMPLES, { backend, generate: { maxTokens: 8, temperature: 0 }, onRecord: (p) => void preds.push(p) });
      const cli = await Promise.all(preds.map((p) => judgeRecord(p, localJudge)));
      const ours = [...store.results.values()]
        .filter((r) => r.backend === id)
        .sort((a, b) => a.index - b.index)
        .map((r) => r.judged['local-rubric']);
      expect(scoreJudged(ours)).toEqual(scoreJudged(cli));
      expect(ours.map((r) => r.gen)).toEqual(cli.map((r) => r.gen));
    }
    const total = (id: string) => scoreJudged([...store.results.values()].filter((r) => r.backend === id).map((r) => r.judged['local-rubric'])).overall.total!;
    expect(total('reference')).toBe(100);
    expect(total('reference')).toBeGreaterThan(total('model'));
    expect(total('reference')).toBeGreaterThan(total('copy-last'));
  });

  it('stops when asked, keeps what finished, and a resume does only the rest', async () => {
    let generated = 0;
    const { store, deps, stop } = memoryDeps(bench(), () => {
      const inner = halfModel();
      return {
        name: 'model',
        async *generate(r, o) {
          if (++generated === 5) stop.abort(new StopRequested());
          yield* inner.generate(r, o);
        },
      };
    });
    await expect(runBench('b1', deps)).rejects.toBeInstanceOf(StopRequested);
    expect(store.bench.state).toBe('stopped');
    const kept = store.results.size;
    expect(kept).toBeGreaterThanOrEqual(3);
    expect(kept).toBeLessThan(12);

    // Resume: a fresh job on the same store does what is missing, never a stored result again.
    const before = new Map([...store.results].map(([k, v]) => [k, JSON.stringify(v.prediction)]));
    const judgedBefore = [...store.results.values()].filter((r) => Object.hasOwn(r.judged, 'local-rubric')).length;
    generated = 100;
    const again = memoryDeps(bench(), () => halfModel());
    again.store.bench = store.bench;
    again.store.results = store.results;
    const out = await runBench('b1', again.deps);
    expect(out.total).toBe(72);
    expect(again.store.bench.state).toBe('done');
    expect(store.results.size).toBe(36);
    // Stored predictions are judged, never generated again.
    for (const [k, v] of before) expect(JSON.stringify(store.results.get(k)!.prediction)).toBe(v);
    // The first progress record of the resumed run counts the kept work as done.
    expect(again.store.progress[0].done).toBe(kept + judgedBefore + 1);
  });

  it('records a failed generation as failed, goes on, and generates it again on resume', async () => {
    const { store, deps } = memoryDeps(
      bench({ backends: [{ id: 'model', name: 'model', kind: 'endpoint', endpoint: { baseUrl: 'http://x', model: 'm' } }] }),
      () => halfModel(new Set([2])),
    );
    const out = await runBench('b1', deps);
    expect(out.failed).toBe(2); // the generation, and its judgement ("No model generation")
    const bad = [...store.results.values()].find((r) => r.prediction.gen_error !== undefined)!;
    expect(bad.judged['local-rubric']).toMatchObject({ failed: true, error: 'No model generation' });
    expect(scoreJudged([...store.results.values()].map((r) => r.judged['local-rubric'])).overall.failed).toBe(1);

    const again = memoryDeps(store.bench, () => halfModel());
    again.store.results = store.results;
    const second = await runBench('b1', again.deps);
    expect(second.failed).toBe(0);
    expect(second.done - (second.total - 2)).toBe(2); // one prediction and one judgement made again
    expect([...store.results.values()].every((r) => r.prediction.gen_error === undefined && !r.judged['local-rubric'].failed)).toBe(true);
  });

  it('a judge added later judges the stored predictions without generating again', async () => {
    const { store, deps } = memoryDeps(bench(), () => halfModel());
    await runBench('b1', deps);
    const calls: string[] = [];
    const second: Judge = {
      name: 'strict',
      judge: async (input) => {
        calls.push(input.prediction);
        const v = await localJudge.judge(input);
        return v.failed ? v : { ...v, total: Math.max(1, v.total - 1) };
      },
    };
    store.bench.judges.push({ id: 'strict', kind: 'endpoint', endpoint: { baseUrl: 'http://j', model: 'j' } });
    const again = memoryDeps(
      store.bench,
      () => {
        throw new Error('no generation expected');
      },
      { openJudge: (ref) => (ref.id === 'strict' ? { judge: second, concurrency: 3 } : openBenchJudge(ref, undefined)) },
    );
    again.store.results = store.results;
    const out = await runBench('b1', again.deps);
    expect(again.store.opened).toEqual([]);
    expect(calls.length).toBe(36);
    expect(out.total).toBe(36 * 3);
    for (const r of store.results.values()) expect(r.judged.strict.judge).toBe('strict');
  });

  it('records a backend blocked by CORS against it, and the other backends finish', async () => {
    const cors = new EndpointError('cors', 'http://x/chat/completions', 'the browser could not call http://x/chat/completions from this page');
    const { store, deps } = memoryDeps(bench(), () => ({
      name: 'model',
      // biome-ignore lint/correctness/useYield: a backend that fails before its first piece
      async *generate() {
        throw cors;
      },
    }));
    const out = await runBench('b1', deps);
    expect(store.bench.state).toBe('failed');
    expect(store.bench.backendProblems).toEqual({ model: { kind: 'cors', message: cors.message } });
    expect(store.bench.error).toMatch(/^model could not run .* the other backends finished/);
    // The baselines ran and were judged; the blocked backend has nothing stored.
    const by = (id: string) => [...store.results.values()].filter((r) => r.backend === id);
    expect(by('copy-last').length).toBe(12);
    expect(by('reference').every((r) => r.judged['local-rubric'] && !r.judged['local-rubric'].failed)).toBe(true);
    expect(by('model')).toEqual([]);
    expect(out.done).toBe(48);

    // Fixed and tried again: the problem goes, only the blocked backend's work is done.
    const again = memoryDeps(store.bench, () => halfModel());
    again.store.results = store.results;
    await runBench('b1', again.deps);
    expect(again.store.bench.state).toBe('done');
    expect(again.store.bench.backendProblems).toBeUndefined();
    expect(again.store.opened).toEqual(['model']);
  });

  it('records a checkpoint that cannot be opened, and a refused key, as problems of their backends', async () => {
    const refs = [
      { id: 'ckpt', name: 'local:sft', kind: 'checkpoint' as const, checkpoint: { key: 'ckpt' } },
      { id: 'keyed', name: 'endpoint:k', kind: 'endpoint' as const, endpoint: { baseUrl: 'http://k', model: 'k' } },
      { id: 'reference', name: 'reference', kind: 'reference' as const },
    ];
    const { store, deps } = memoryDeps(bench({ backends: refs }), () => halfModel(), {
      openBackend: async (ref, x) => {
        if (ref.kind === 'checkpoint') throw new CheckpointError('the sft checkpoint: the checkpoint holds no tokenizer (metadata "tokenizer")');
        if (ref.kind === 'endpoint') throw new EndpointError('auth', 'http://k', 'the endpoint refused the API key (HTTP 401)', { status: 401 });
        return openBenchBackend(ref, x, NO_GPU, undefined);
      },
    });
    await runBench('b1', deps);
    expect(store.bench.backendProblems).toEqual({
      ckpt: { kind: 'checkpoint', message: expect.stringContaining('holds no tokenizer') },
      keyed: { kind: 'auth', message: expect.stringContaining('refused the API key') },
    });
    expect([...store.results.values()].filter((r) => r.backend === 'reference').length).toBe(12);
  });

  it('runs baselines without the GPU, and a checkpoint without WebGPU is a problem of its own row', async () => {
    await expect(openBenchBackend({ id: 'copy-last', name: 'copy-last', kind: 'copy-last' }, bench(), NO_GPU, undefined)).resolves.toBeTruthy();
    const noWebGpu = { gpu: () => Promise.reject(new WebGPUUnavailableError('This browser does not expose WebGPU (navigator.gpu is missing).', 'help')) };
    const ref = {
      id: 'ckpt',
      name: 'local:sft',
      kind: 'checkpoint' as const,
      checkpoint: { runId: 'r', runName: 'run', tag: 'last' as const, step: 1, key: 'k' },
    };
    const err = await openBenchBackend(ref, bench(), noWebGpu, undefined).catch((e) => e);
    expect(err).toBeInstanceOf(BackendFailed);
    expect(backendProblem(err)).toEqual({
      kind: 'no-webgpu',
      message: expect.stringMatching(/^local:sft runs on the GPU, and WebGPU is not available here: .*navigator.gpu is missing/),
    });
  });

  it('stops an endpoint backend whose server never answered, but not one that failed after answering', async () => {
    const down = new EndpointError(
      'unreachable',
      'http://127.0.0.1:9/v1/chat/completions',
      'cannot reach http://127.0.0.1:9/v1/chat/completions (fetch failed)',
    );
    let calls = 0;
    const flaky: LwmBackend = {
      name: 'e',
      async *generate() {
        if (++calls > 1) throw down;
        yield 'ok';
      },
    };
    const never = stopWhenDown({ ...flaky, generate: flaky.generate });
    calls = 1;
    const first = await drain(never).catch((e) => e);
    expect(first).toBeInstanceOf(BackendFailed);
    expect(backendProblem(first)).toEqual({ kind: 'unreachable', message: down.message });
    calls = 0;
    const answered = stopWhenDown(flaky);
    expect(await drain(answered)).toBe('ok');
    await expect(drain(answered)).rejects.toBe(down);
  });

  it('estimates the time left from the rates measured so far', async () => {
    let clock = 0;
    const model = (): LwmBackend => ({
      name: 'model',
      async *generate(req, o) {
        clock += 1000; // one second a prediction
        yield* halfModel().generate(req, o);
      },
    });
    const { store, deps } = memoryDeps(
      bench({
        backends: [
          { id: 'model', name: 'model', kind: 'endpoint', endpoint: { baseUrl: 'http://x', model: 'm' } },
          { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
        ],
      }),
      model,
      {
        now: () => clock,
        openBackend: async (ref, x) =>
          ref.kind === 'endpoint'
            ? { backend: model(), generate: { maxTokens: 8, temperature: 0 }, concurrency: 1, form: 'chat' as const, dispose() {} }
            : openBenchBackend(ref, x, NO_GPU, undefined),
      },
    );
    await runBench('b1', deps);
    const gen = store.progress.filter((p) => p.phase === 'generate' && p.backend === 'model');
    // After k predictions at 1 s each: 12 − k left; the local judge and the baseline cost nothing measurable.
    expect(gen.map((p) => p.etaMs)).toEqual(Array.from({ length: 12 }, (_, k) => (11 - k) * 1000));
    expect(store.progress.at(-1)!.etaMs).toBe(0);
  });

  it('a Hugging Face folder not open in the page (a reload since) says to pick it again; its files never go into the record', async () => {
    const hf = { folderId: 'Tiny#x', name: 'Tiny', architecture: 'LlamaForCausalLM', parameters: 60_000, context: null, memoryGiB: 1 };
    const ref = { id: 'hf:Tiny#x', name: 'hf:Tiny', kind: 'hf' as const, hf };
    await expect(openBenchBackend(ref, bench({ backends: [ref] }), { gpu: () => Promise.reject(new Error('no GPU in this test')) }, undefined)).rejects.toThrow(
      'hf:Tiny: the folder Tiny is not open in this page (folders are not kept after a reload). Pick the same folder again in the New benchmark form, then resume.',
    );
    const { store, deps } = memoryDeps(bench({ backends: [ref, { id: 'copy-last', name: 'copy-last', kind: 'copy-last' }] }), () => halfModel());
    await runBench('b1', deps);
    expect(store.bench.backendProblems?.['hf:Tiny#x']?.message).toMatch(/Pick the same folder again/);
    expect(store.bench).toMatchObject({ state: 'failed', backends: [ref, { kind: 'copy-last' }] });
  });

  it('tells the user when the settings leave no held-out turn', async () => {
    const { store, deps } = memoryDeps(bench(), () => halfModel(), { loadSamples: async () => [] as AwbSampleRecord[] });
    await expect(runBench('b1', deps)).rejects.toThrow('has no held-out turns');
    expect(store.bench.state).toBe('failed');
  });
});
