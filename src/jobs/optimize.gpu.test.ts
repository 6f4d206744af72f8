// The 'optimize' job with a checkpoint of ours on a real GPU (Dawn): a micro checkpoint (a few
// dozen SFT steps on the terminal domain) simulates each candidate template through the turn
// request the job renders (the template travels with the turn, the model lays it out), the local
// judge scores, the offline optimizer proposes: 3 rounds, twice with the same seed, give the same
// lineage and scores, and every scored candidate's text reached the model. A checkpoint this
// small writes blank lines whatever its prompt, so its scores tie at the judge's floor; the e2e
// test (e2e/optimize.spec.ts) is where candidates score apart.
import { describe, expect, it } from 'vitest';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { sampleFromRecord } from '../core/bench/runner.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { localJudge } from '../core/judge/rubric.ts';
import { offlineOptimizer } from '../core/optimize/optimizers.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { openCheckpointBackend } from '../backends/checkpoint.ts';
import { isTurnRequest } from '../core/backend.ts';
import type { OptimizationRecord } from '../core/records.ts';
import { runOptimize, type OptimizeDeps } from './optimize.ts';
import { runTraining } from '../train/pipeline.ts';

const STEPS = Number(process.env.LWM_OPT_STEPS ?? 40);
const trajectories = generateTrajectories('terminal', 8, 0);
const samples = benchSampleRecords(trajectories, { evalFraction: 1, seed: 0 }).map(sampleFromRecord);

function record(): OptimizationRecord {
  return {
    id: 'opt-gpu',
    name: 'gpu',
    createdAt: 1,
    updatedAt: 1,
    state: 'queued',
    start: { version: 'v1', template: structuredClone(BUILTIN_TEMPLATES.v1) },
    data: { datasetId: 'd', name: 'generated', domains: [], evalFraction: 1, seed: 0, devPerDomain: 4, testPerDomain: 2 },
    backend: { id: 'ck', name: 'micro', kind: 'checkpoint', checkpoint: { runId: 'r', runName: 'micro', tag: 'last', step: 0, key: 'k' } },
    judge: { id: 'local-rubric', kind: 'local' },
    optimizer: { kind: 'offline' },
    generation: { maxTokens: 6 },
    config: { rounds: 3, candidates: 2, margin: 0, level: 0.95, seed: 5 },
    loop: null,
  };
}

async function run(rt: Awaited<ReturnType<typeof gpuRuntime>>, bytes: Uint8Array) {
  const seen = new Set<string>();
  const store = new Map([['opt-gpu', record()]]);
  const deps: OptimizeDeps = {
    get: async (id) => structuredClone(store.get(id)),
    async update(id, change) {
      const r = structuredClone(store.get(id)!);
      change(r);
      store.set(id, r);
      return structuredClone(r);
    },
    loadSamples: async () => samples,
    async openBackend(_ref, o) {
      const local = openCheckpointBackend(rt, bytes, { source: 'micro', name: 'local:micro' });
      const backend = {
        name: local.backend.name,
        generate: (req: Parameters<typeof local.backend.generate>[0], opts: Parameters<typeof local.backend.generate>[1]) => (
          seen.add(isTurnRequest(req) ? (req.template?.text ?? '') : 'not a turn request'), local.backend.generate(req, opts)
        ),
      };
      return {
        backend,
        generate: { maxTokens: o.generation.maxTokens!, temperature: 0 },
        concurrency: 1,
        form: 'turn' as const,
        dispose: () => local.dispose(),
      };
    },
    openJudge: () => ({ judge: localJudge, concurrency: 1 }),
    optimizer: () => offlineOptimizer(),
    signal: new AbortController().signal,
    progress() {},
    log() {},
    now: () => 0,
  };
  const result = await runOptimize('opt-gpu', deps);
  return { result, loop: store.get('opt-gpu')!.loop!, seen };
}

describe('the optimize job with a checkpoint on the GPU', () => {
  it('3 offline rounds, deterministically, each candidate rendered for the model', async () => {
    const rt = await gpuRuntime();
    const host = { rt, step: async () => {}, log: () => {}, metric: () => {}, checkpoint: () => {} };
    const { checkpoint: bytes } = await runTraining(
      {
        kind: 'train',
        stage: 'sft',
        preset: 'micro',
        vocabSize: 384,
        steps: STEPS,
        batch: 4,
        T: 256,
        evalEvery: STEPS,
        evalBatches: 1,
        evalJudgeSamples: 0,
        seed: 1,
        domains: ['terminal'],
      },
      generateTrajectories('terminal', 24, 7),
      host,
    );
    const a = await run(rt, bytes);
    expect(a.result.stopped).toBe('done');
    expect(a.loop.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    const means = a.loop.versions.filter((v) => v.mean !== undefined).map((v) => v.mean);
    console.log(`dev means: ${a.loop.versions.map((v) => `${v.id} ${v.status} ${v.mean?.toFixed(2) ?? '-'}`).join(', ')}`);
    expect(means.length).toBeGreaterThan(3);
    expect(means.every((m) => typeof m === 'number')).toBe(true);
    // Every scored version's text (and the best's again on the test split) was the template of the turns sent.
    expect([...a.seen].sort()).toEqual([...new Set(a.loop.versions.filter((v) => v.mean !== undefined).map((v) => v.text))].sort());
    expect(a.loop.test?.mean).toEqual(expect.any(Number));
    const b = await run(rt, bytes);
    expect(JSON.stringify(b.loop)).toBe(JSON.stringify(a.loop));
  }, 600_000);
});
