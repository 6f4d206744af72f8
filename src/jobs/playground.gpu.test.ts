// The Playground's 'generate' job on a real GPU: a checkpoint of ours streams one turn's
// observation with its token count and context report, stays loaded for the next job (a file
// job without bytes then still runs), stops on request with the text so far, and a file without
// our metadata is refused with a message that says why.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { trainBpe } from '../core/tokenizer/index.ts';
import { gpuRuntime } from '../gpu/testing/runtime.ts';
import { saveCheckpoint } from '../core/model/checkpoint.ts';
import { writeSafetensors } from '../core/model/safetensors.ts';
import { presetConfig } from '../core/model/config.ts';
import { initParams } from '../model/init.ts';
import type { JobContext } from '../train/context.ts';
import type { JobState } from './protocol.ts';
import { MODEL_NOT_LOADED, releasePlaygroundModel, runGenerateJob, type GenerateJobResult, type GenerateJobSpec, type GenerateProgress } from './playground.ts';

function fakeContext(rt: JobContext['rt']) {
  const texts: string[] = [];
  const progress: GenerateProgress[] = [];
  const listeners = new Set<(s: JobState) => void>();
  const ctx: JobContext = {
    rt,
    gpu: async () => rt,
    jobId: 'j',
    step: async () => {},
    metric: () => {},
    checkpoint: () => {},
    onState: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    text: (t) => texts.push(t),
    log: () => {},
    progress: (d) => progress.push(d as GenerateProgress),
    stopRequested: false,
    lost: null,
    failure: async (e) => e,
  };
  return { ctx, texts, progress, setState: (s: JobState) => listeners.forEach((l) => l(s)) };
}

describe('generate job', () => {
  it('streams a turn from a checkpoint kept loaded between jobs, stops on request, refuses a foreign file', async () => {
    const rt = await gpuRuntime();
    const data = generateTrajectories('terminal', 2, 3);
    const tok = trainBpe(
      data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
      { vocabSize: 300 },
    );
    const config = presetConfig('micro', { vocabSize: tok.vocabSize, contextLength: 64 });
    const bytes = saveCheckpoint({ config, params: initParams(config, 5), step: 7, extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(tok.toJSON()) } });
    const t = data[0];
    const request = { sample: { domain: 'terminal', systemPrompt: t.system_prompt, history: t.turns.slice(0, 2), action: t.turns[2].action } };
    // Seeded sampling (an untrained model's greedy choice can be the closing tag at once).
    const sampling = { maxTokens: 8, temperature: 1, seed: 11 };
    try {
      const a = fakeContext(rt);
      const spec: GenerateJobSpec = {
        kind: 'generate',
        model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:f', label: 'x.safetensors' } },
        bytes,
        request,
        sampling,
      };
      const r = (await runGenerateJob(spec, a.ctx)) as GenerateJobResult;
      expect(r.model).toMatchObject({ name: 'local:sft-7', step: 7, contextLength: 64, template: 'v0' });
      expect(a.texts.join('')).toBe(r.text);
      expect(r.tokens).toBeGreaterThan(0);
      expect(r.tokens).toBeLessThanOrEqual(8);
      expect(r.stopped).toBe(false);
      // The context report: 56 tokens of room in 64, and the sample's system prompt does not fit whole.
      expect(r.context).toMatchObject({ exact: true, context: 64, maxTokens: 8, room: 56, truncated: true });
      expect(r.context!.prompt).toBeLessThanOrEqual(56);
      expect(a.progress.map((p) => p.kind)).toEqual(['model', 'context', ...a.texts.map(() => 'tokens')]);

      // Kept loaded: the same file without its bytes runs, the same seed gives the same text.
      const b = fakeContext(rt);
      const again = (await runGenerateJob(
        { ...spec, model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:f', label: 'x.safetensors' } }, bytes: undefined },
        b.ctx,
      )) as GenerateJobResult;
      expect(again.text).toBe(r.text);

      // Stop: the first piece's arrival asks for a stop; the job ends with what it had.
      const c = fakeContext(rt);
      c.ctx.text = (x) => {
        c.texts.push(x);
        c.setState('stopping');
      };
      const stopped = (await runGenerateJob(
        {
          ...spec,
          model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:f', label: 'x.safetensors' } },
          bytes: undefined,
          sampling: { maxTokens: 8, temperature: 1, seed: 3 },
        },
        c.ctx,
      )) as GenerateJobResult;
      if (c.texts.length) {
        expect(stopped.stopped).toBe(true);
        expect(c.texts).toHaveLength(1);
        expect(stopped.text).toBe(c.texts[0]);
      }

      // Max tokens that leave no room, and a released model, and a file that is not ours.
      await expect(runGenerateJob({ ...spec, sampling: { maxTokens: 64, temperature: 0 } }, fakeContext(rt).ctx)).rejects.toThrow(
        /local:sft-7: 64 new tokens leave no room for a prompt in the model's 64-token context; choose from 1 to 63/,
      );
      await runGenerateJob({ kind: 'generate', release: true }, fakeContext(rt).ctx);
      await expect(
        runGenerateJob(
          { ...spec, model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:f', label: 'x.safetensors' } }, bytes: undefined },
          fakeContext(rt).ctx,
        ),
      ).rejects.toThrow(MODEL_NOT_LOADED);
      // A file from another tool: GPT-2 tensor names, no config, tokenizer or template in its metadata.
      const hf = writeSafetensors([{ name: 'wte.weight', dtype: 'F32', shape: [4, 2], data: new Float32Array(8) }], { format: 'pt' });
      await expect(
        runGenerateJob(
          { ...spec, model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:hf', label: 'hf.safetensors' } }, bytes: hf },
          fakeContext(rt).ctx,
        ),
      ).rejects.toThrow(/hf.safetensors is not an LWM Studio checkpoint/);
      const noTok = saveCheckpoint({ config, params: initParams(config, 5), step: 1 });
      await expect(
        runGenerateJob(
          { ...spec, model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:nt', label: 'nt.safetensors' } }, bytes: noTok },
          fakeContext(rt).ctx,
        ),
      ).rejects.toThrow(/nt.safetensors holds no tokenizer/);
    } finally {
      releasePlaygroundModel();
    }
  });
});

describe('a device lost during generation', () => {
  it('fails the generate job with the loss; the next job loads the model on a fresh device', async () => {
    const { JOB_RUNNERS } = await import('./jobs.ts');
    const { deviceJobHost } = await import('./jobs.testing.ts');
    const data = generateTrajectories('terminal', 2, 3);
    const tok = trainBpe(
      data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
      { vocabSize: 300 },
    );
    const config = presetConfig('micro', { vocabSize: tok.vocabSize, contextLength: 64 });
    const bytes = saveCheckpoint({ config, params: initParams(config, 5), step: 2, extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(tok.toJSON()) } });
    // Destroy the device when the first piece of the observation arrives.
    const { host, events, held, finished } = deviceJobHost(JOB_RUNNERS, (m, device) => {
      if (m.type === 'text' && m.jobId === 'a') device.handle('destroy');
    });
    const request = { sample: { domain: 'terminal', systemPrompt: data[0].system_prompt, history: [], action: 'ls' } };
    const spec = {
      kind: 'generate',
      model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:lost', label: 'lost.safetensors' } },
      bytes,
      request,
      sampling: { maxTokens: 40, temperature: 1, seed: 11 },
    };
    host.handle({ type: 'start', jobId: 'a', spec });
    expect(await finished('a')).toMatchObject({ state: 'failed' });
    const error = events.find((e) => e.type === 'error' && e.jobId === 'a') as { message: string };
    expect(error.message).toMatch(/^The GPU device was lost \(destroyed\)/);
    // The model held on the lost device is not reused: without its bytes the worker asks for them, with them it runs.
    host.handle({
      type: 'start',
      jobId: 'b',
      spec: { ...spec, model: { kind: 'checkpoint' as const, checkpoint: { key: 'file:lost', label: 'lost.safetensors' } }, bytes: undefined },
    });
    expect(await finished('b')).toMatchObject({ state: 'failed' });
    expect((events.find((e) => e.type === 'error' && e.jobId === 'b') as { message: string }).message).toBe(MODEL_NOT_LOADED);
    host.handle({ type: 'start', jobId: 'c', spec });
    expect(await finished('c')).toMatchObject({ state: 'done' });
    expect(held).toHaveLength(2);
    releasePlaygroundModel();
    held[1].dispose();
  });
});
