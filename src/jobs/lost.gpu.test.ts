// A GPU device lost mid-job (destroyed on purpose, as the System view's "simulate loss" does).
// Training: the job fails at once with a message that says the run can be resumed, its last
// checkpoint is intact, and resuming it acquires a fresh device and finishes the run. A benchmark:
// the job fails as a device loss, every prediction stored before the loss is kept, and resuming
// it on a fresh device makes only the missing ones. A prompt optimization: the job fails as a
// device loss, the loop state stored before the loss is kept, and resuming it on a fresh device
// continues from that state (the scored versions are not scored again) to the end. The
// Playground: a generation fails as a device loss, the model it kept loaded is not used again
// (a turn without the file's bytes asks for them), and the next turn runs on a fresh device.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { deviceJobHost } from './jobs.testing.ts';
import { JOB_RUNNERS, type TrainJobSpec } from './jobs.ts';
import type { TrainSpec } from '../train/pipeline.ts';
import type { FromWorker } from './protocol.ts';
import type { BenchProgress } from './bench.ts';
import type { BenchRecord, OptimizationRecord, RunRecord } from '../core/records.ts';
import type { OptimizeProgress } from './optimize.ts';
import { MODEL_NOT_LOADED, type GenerateJobResult } from './playground.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { benchSampleRecords } from '../core/bench/evalTurns.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { saveCheckpoint } from '../core/model/checkpoint.ts';
import { presetConfig } from '../core/model/config.ts';
import { initParams } from '../model/init.ts';

// @ts-expect-error -- the package's types do not resolve through its exports map
if (typeof indexedDB === 'undefined') await import('fake-indexeddb/auto');
const { getRun, putRun, saveCheckpoint: storeCheckpoint } = await import('../storage/runs.ts');
const { getBench, loadResults, putBench } = await import('../storage/bench.ts');
const { getOptimization, putOptimization } = await import('../storage/optimize.ts');
const { saveDataset, newDatasetId } = await import('../storage/datasets.ts');

const data = generateTrajectories('terminal', 8, 4);
const spec: TrainSpec = {
  kind: 'train',
  stage: 'sft',
  preset: 'micro',
  vocabSize: 300,
  steps: 4,
  batch: 1,
  T: 32,
  evalEvery: 2,
  evalBatches: 1,
  evalJudgeSamples: 0,
  seed: 3,
};
const tick = () => new Promise((r) => setTimeout(r, 5));

describe('a device lost during training', () => {
  it('fails the job with a resumable message, and the run resumes from its last checkpoint on a fresh device', async () => {
    // Destroy the device right when step 3 is reported: the last checkpoint is step 2's.
    const { host, events, held, finished } = deviceJobHost(JOB_RUNNERS, (m, device) => {
      if (m.type === 'metric' && m.jobId === 'a' && m.step === 3) device.handle('destroy');
    });
    const run: TrainJobSpec = {
      kind: 'train',
      runId: `lost-${Math.random().toString(36).slice(2, 8)}`,
      train: spec,
      data: { trajectories: data, name: 'terminal×8' },
    };
    host.handle({ type: 'start', jobId: 'a', spec: run });
    expect(await finished('a')).toMatchObject({ state: 'failed' });
    const error = events.find((e) => e.type === 'error' && e.jobId === 'a') as { message: string };
    expect(error.message).toMatch(/^The GPU device was lost \(destroyed\).* The job stopped; a training run can be resumed from its last checkpoint/);
    expect(events.some((e) => e.type === 'lost')).toBe(true);
    // The runner records the run's failure as the loss reaches it (an IndexedDB write after the message).
    for (let i = 0; i < 400 && (await getRun(run.runId))?.state !== 'failed'; i++) await tick();
    const failed = (await getRun(run.runId))!;
    expect(failed.state).toBe('failed');
    expect(failed.error).toBe(error.message);
    expect(failed.checkpoints.last?.step).toBe(2);

    host.handle({ type: 'start', jobId: 'b', spec: { kind: 'train', runId: run.runId, resume: true, data: run.data } });
    expect(await finished('b')).toMatchObject({ state: 'done' });
    expect(held).toHaveLength(2);
    expect((await getRun(run.runId))!).toMatchObject({ state: 'done', resumes: [2], step: 4 });
    held[1].dispose();
  });
});

describe('a device lost during a benchmark', () => {
  it('fails the job as a device loss, keeps every stored prediction, and a resume on a fresh device makes only the missing ones', async () => {
    // Destroy the device after the checkpoint's second prediction is stored.
    let checkpointPredictions = 0;
    const { host, events, held, finished } = deviceJobHost(JOB_RUNNERS, (m, device) => {
      const p = m.type === 'progress' && m.jobId === 'bench-a' ? (m.data as BenchProgress) : null;
      if (p?.phase === 'generate' && p.backend === 'ckpt' && ++checkpointPredictions === 2) device.handle('destroy');
    });
    const { key, runId } = await storedMicroCheckpoint('bench-lost');
    const samples = benchSampleRecords(data, { evalFraction: 1, seed: 0 }).slice(0, 5);
    const benchId = `lost-${runId}`;
    const bench: BenchRecord = {
      id: benchId,
      name: 'lost',
      createdAt: 0,
      updatedAt: 0,
      origin: 'run',
      state: 'queued',
      data: { datasetId: null, name: 'terminal×8', perDomain: null, evalFraction: 1, seed: 0, domains: ['terminal'] },
      samples,
      backends: [
        { id: 'copy-last', name: 'copy-last', kind: 'copy-last' },
        { id: 'ckpt', name: 'local:sft-2', kind: 'checkpoint', checkpoint: { key, runId, runName: runId, tag: 'last', step: 2 } },
      ],
      judges: [{ id: 'local-rubric', kind: 'local' }],
      generation: { maxTokens: 6 },
      progress: { done: 0, total: 0 },
    };
    await putBench(bench);

    host.handle({ type: 'start', jobId: 'bench-a', spec: { kind: 'bench', benchId } });
    expect(await finished('bench-a')).toMatchObject({ state: 'failed' });
    const error = events.find((e) => e.type === 'error' && e.jobId === 'bench-a') as Extract<FromWorker, { type: 'error' }>;
    expect(error).toMatchObject({ kind: 'device-lost', message: expect.stringMatching(/^The GPU device was lost \(destroyed\)/) });
    // What was stored before the loss is kept: every copy-last prediction, the checkpoint's first two.
    const before = await loadResults(benchId);
    const made = (backend: string, rs: typeof before) => rs.filter((r) => r.backend === backend && r.prediction.gen_error === undefined).length;
    expect(made('copy-last', before)).toBe(samples.length);
    expect(made('ckpt', before)).toBeGreaterThanOrEqual(2);
    const kept = new Map(before.map((r) => [`${r.backend}#${r.index}`, r.prediction.gen]));
    for (let i = 0; i < 400 && (await getBench(benchId))?.state === 'running'; i++) await tick();
    expect((await getBench(benchId))!.state).not.toBe('running');

    host.handle({ type: 'start', jobId: 'bench-b', spec: { kind: 'bench', benchId } });
    expect(await finished('bench-b')).toMatchObject({ state: 'done' });
    expect(held).toHaveLength(2);
    const after = await loadResults(benchId);
    expect(made('copy-last', after)).toBe(samples.length);
    expect(made('ckpt', after)).toBe(samples.length);
    // The predictions made before the loss are the ones stored then (not made again).
    for (const r of after)
      if (kept.has(`${r.backend}#${r.index}`) && r.prediction.gen_error === undefined) expect(r.prediction.gen).toBe(kept.get(`${r.backend}#${r.index}`));
    expect((await getBench(benchId))!).toMatchObject({ state: 'done', progress: { done: expect.any(Number) } });
    held[1].dispose();
  });
});

/** A stored checkpoint of an untrained micro model, as a run's last (its predictions are noise; judges score them all the same). */
async function storedMicroCheckpoint(prefix: string): Promise<{ key: string; runId: string }> {
  const tok = trainBpe(
    data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
    { vocabSize: 300 },
  );
  const config = presetConfig('micro', { vocabSize: tok.vocabSize, contextLength: 64 });
  const runId = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const bytes = saveCheckpoint({ config, params: initParams(config, 5), step: 2, extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(tok.toJSON()) } });
  await putRun({
    id: runId,
    name: runId,
    createdAt: 1,
    updatedAt: 1,
    stage: 'sft',
    spec: { ...spec, steps: 2 },
    data: { name: 'terminal×8', trajectories: data.length },
    from: null,
    state: 'done',
    step: 2,
    checkpoints: {},
    resumes: [],
  } as unknown as RunRecord);
  const stored = await storeCheckpoint(runId, 'last', bytes, { step: 2 });
  return { key: stored.key, runId };
}

describe('a device lost during a prompt optimization', () => {
  it('fails the job as a device loss, keeps the stored loop state, and a resume on a fresh device goes on from it', async () => {
    // Destroy the device once the start template has been scored and the first round's first candidate is being scored.
    let states = 0;
    let destroyed = false;
    const { host, events, held, finished } = deviceJobHost(JOB_RUNNERS, (m, device) => {
      const p = m.type === 'progress' && m.jobId === 'opt-a' ? (m.data as OptimizeProgress) : null;
      if (p?.phase === 'state') states++;
      if (!destroyed && states >= 1 && p?.phase === 'evaluate' && (p.evaluations.done ?? 0) >= 1 && (p.samples?.done ?? 0) >= 1) {
        destroyed = true;
        device.handle('destroy');
      }
    });
    const { key, runId } = await storedMicroCheckpoint('opt-lost');
    const dataset = await saveDataset(
      { id: newDatasetId(), name: 'terminal×8', createdAt: 1, origin: 'import', formats: ['native'], files: ['t.jsonl'], errorCount: 0 },
      data,
    );
    const optId = `opt-lost-${runId}`;
    const record: OptimizationRecord = {
      id: optId,
      name: 'lost',
      createdAt: 1,
      updatedAt: 1,
      state: 'queued',
      start: { version: 'v1', template: structuredClone(BUILTIN_TEMPLATES.v1) },
      data: { datasetId: dataset.id, name: dataset.name, domains: [], evalFraction: 1, seed: 0, devPerDomain: 3, testPerDomain: 2 },
      backend: { id: 'ck', name: 'local:micro', kind: 'checkpoint', checkpoint: { key, runId, runName: runId, tag: 'last', step: 2 } },
      judge: { id: 'local-rubric', kind: 'local' },
      optimizer: { kind: 'offline' },
      generation: { maxTokens: 4 },
      config: { rounds: 1, candidates: 2, margin: 0, level: 0.95, seed: 5 },
      loop: null,
    };
    await putOptimization(record);

    host.handle({ type: 'start', jobId: 'opt-a', spec: { kind: 'optimize', optId } });
    expect(await finished('opt-a')).toMatchObject({ state: 'failed' });
    expect(destroyed).toBe(true);
    const error = events.find((e) => e.type === 'error' && e.jobId === 'opt-a') as Extract<FromWorker, { type: 'error' }>;
    expect(error).toMatchObject({ kind: 'device-lost', message: expect.stringMatching(/^The GPU device was lost \(destroyed\)/) });
    for (let i = 0; i < 400 && (await getOptimization(optId))?.state === 'running'; i++) await tick();
    const failed = (await getOptimization(optId))!;
    expect(failed.state).toBe('failed');
    // The start template's score, stored before the loss, is kept.
    const v0 = failed.loop!.versions.find((v) => v.id === 'v0')!;
    expect(v0.mean).toEqual(expect.any(Number));

    host.handle({ type: 'start', jobId: 'opt-b', spec: { kind: 'optimize', optId } });
    expect(await finished('opt-b')).toMatchObject({ state: 'done' });
    expect(held).toHaveLength(2);
    const done = (await getOptimization(optId))!;
    expect(done.state).toBe('done');
    expect(done.loop!.rounds.map((r) => r.round)).toEqual([1]);
    // Resumed, not restarted: v0 is the one scored before the loss.
    expect(done.loop!.versions.find((v) => v.id === 'v0')).toEqual(v0);
    expect(done.loop!.test?.mean).toEqual(expect.any(Number));
    held[1].dispose();
  });
});

describe('a device lost during a Playground generation', () => {
  it('fails the turn as a device loss; the next turn reloads the model on a fresh device', async () => {
    let destroyed = false;
    const { host, events, held, finished } = deviceJobHost(JOB_RUNNERS, (m, device) => {
      if (!destroyed && m.type === 'text' && m.jobId === 'gen-a') {
        destroyed = true;
        device.handle('destroy');
      }
    });
    const tok = trainBpe(
      data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
      { vocabSize: 300 },
    );
    const config = presetConfig('micro', { vocabSize: tok.vocabSize, contextLength: 64 });
    const bytes = saveCheckpoint({ config, params: initParams(config, 5), step: 7, extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(tok.toJSON()) } });
    const t = data[0];
    const request = { sample: { domain: 'terminal', systemPrompt: t.system_prompt, history: t.turns.slice(0, 2), action: t.turns[2].action } };
    const model = { kind: 'checkpoint' as const, checkpoint: { key: 'file:lost', label: 'x.safetensors' } };
    // Seeded sampling with many tokens: the loss comes at the first piece of text, mid-generation.
    const sampling = { maxTokens: 24, temperature: 1, seed: 11 };

    host.handle({ type: 'start', jobId: 'gen-a', spec: { kind: 'generate', model, bytes, request, sampling } });
    expect(await finished('gen-a')).toMatchObject({ state: 'failed' });
    expect(destroyed).toBe(true);
    const error = events.find((e) => e.type === 'error' && e.jobId === 'gen-a') as Extract<FromWorker, { type: 'error' }>;
    expect(error).toMatchObject({ kind: 'device-lost', message: expect.stringMatching(/^The GPU device was lost \(destroyed\)/) });

    // The model loaded on the lost device is not reused: a turn without the bytes asks for them.
    host.handle({ type: 'start', jobId: 'gen-b', spec: { kind: 'generate', model, request, sampling } });
    expect(await finished('gen-b')).toMatchObject({ state: 'failed' });
    expect(events.find((e) => e.type === 'error' && e.jobId === 'gen-b')).toMatchObject({ message: expect.stringContaining(MODEL_NOT_LOADED) });

    // With the bytes, the turn runs on a fresh device.
    host.handle({ type: 'start', jobId: 'gen-c', spec: { kind: 'generate', model, bytes, request, sampling } });
    expect(await finished('gen-c')).toMatchObject({ state: 'done' });
    const done = events.find((e) => e.type === 'done' && e.jobId === 'gen-c') as { result: GenerateJobResult };
    expect(done.result.tokens).toBeGreaterThan(0);
    expect(held.length).toBeGreaterThanOrEqual(2);
    held.at(-1)!.dispose();
  });
});
