// A Hugging Face folder's model as the agent policy (CI shapes: the 2-layer llama-chat fixture):
// through a LoRA adapter and fine-tuned whole, in its chat format, imitation then GSPO, evaluated
// in the real environment; the saved policy (a PEFT adapter, or our checkpoint carrying the base's
// files) goes on exactly where it stopped.
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../core/model/checkpoint.ts';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { isLoraCheckpoint, loadLoraCheckpoint } from '../../model/hf/adapter.ts';
import { readHfBase } from '../../model/hf/base.ts';
import { filesFolder } from '../../model/hf/files.ts';
import { type AgentExperimentState, newAgentExperiment, runAgentExperiment } from './experiment.ts';
import { AGENT_DEFAULTS, AgentSession, type AgentHost, type AgentTrainSpec } from './run.ts';

const FILES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];

async function llamaChat(mode: { kind: 'lora'; rank: number } | { kind: 'full' }) {
  const fs = await import('node:fs/promises');
  const entries = await Promise.all(
    FILES.map(async (n) => ({
      path: `llama-chat/${n}`,
      file: new Blob([new Uint8Array(await fs.readFile(new URL(`../../model/fixtures/hf/llama-chat/${n}`, import.meta.url)))]),
    })),
  );
  const limits = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30, shaderF16: false };
  return readHfBase(filesFolder(entries, 'llama-chat'), { limits, mode }, 'llama-chat');
}

const SPEC: AgentTrainSpec = {
  ...AGENT_DEFAULTS,
  domain: 'terminal',
  families: ['write_word'],
  T: 96,
  trainTasks: 8,
  evalTasks: 2,
  sftSteps: 12,
  sftLr: 1e-2,
  rlSteps: 1,
  rlWarmup: 0,
  batch: 4,
  group: 2,
  tasksPerStep: 1,
  evalEvery: 1,
  maxTurns: 1,
  maxNewTokens: 20,
  seed: 3,
};

function host(rt: AgentHost['rt'], metrics: { phase: string; step: number; values: Record<string, number> }[] = [], log: string[] = []): AgentHost {
  return { rt, log: (m) => log.push(m), metric: (phase, step, values) => metrics.push({ phase, step, values }) };
}

describe('a Hugging Face policy (llama-chat, CI shapes)', () => {
  it('LoRA: imitation lowers the loss, GSPO runs on its moves, and the adapter (PEFT names) goes on exactly where it stopped', async () => {
    const rt = await gpuRuntime();
    const hfBase = await llamaChat({ kind: 'lora', rank: 4 });
    const metrics: { phase: string; step: number; values: Record<string, number> }[] = [];
    const log: string[] = [];
    const session = await AgentSession.open(SPEC, host(rt, metrics, log), { hfBase, lora: { rank: 4 } });
    let bytes: Uint8Array;
    let final;
    try {
      expect(log[0]).toMatch(/llama-chat with a LoRA adapter of rank 4/);
      await session.sft(0, SPEC.sftSteps);
      const loss = metrics.filter((m) => m.phase === 'sft').map((m) => m.values.loss);
      expect(loss).toHaveLength(SPEC.sftSteps);
      expect(loss.every(Number.isFinite)).toBe(true);
      expect(loss[loss.length - 1]).toBeLessThan(loss[0] - 1);
      session.freshOptimizer();
      const rl = await session.rlStep(0, 1, false);
      // G episodes of one task, one move each (maxTurns 1).
      expect(rl.values.moves).toBe(SPEC.group);
      final = await session.evaluate('rl', 1);
      expect(final.solved).toHaveLength(SPEC.evalTasks);
      bytes = await session.checkpoint();
    } finally {
      session.dispose();
    }

    // The saved policy is the adapter on its base, in PEFT's names, with the run's settings.
    expect(isLoraCheckpoint(bytes)).toBe(true);
    const ck = loadLoraCheckpoint(bytes);
    expect(ck.baseModel).toBe('llama-chat');
    expect(ck.settings.rank).toBe(4);
    expect(ck.extraMetadata?.stage).toBe('agent');
    expect(JSON.parse(ck.extraMetadata!.spec).sftSteps).toBe(SPEC.sftSteps);
    expect(ck.lora.some((x) => x !== 0)).toBe(true);

    // Going on from it: the same adapter, and the same greedy episodes on the held-out tasks.
    const again = await AgentSession.open({ ...SPEC, sftSteps: 0, rlSteps: 0 }, host(rt), { hfBase, adapter: bytes });
    try {
      expect(loadLoraCheckpoint(await again.checkpoint()).lora).toEqual(ck.lora);
      const ev = await again.evaluate('start', 0);
      expect({ solved: ev.solved, format: ev.format, turns: ev.turns }).toEqual({ solved: final.solved, format: final.format, turns: final.turns });
    } finally {
      again.dispose();
    }
    // An adapter is not a policy checkpoint of its own: it goes on with its base.
    await expect(AgentSession.open(SPEC, host(rt), bytes)).rejects.toThrow(/LoRA adapter: it goes on from its folder/);
  });

  it('fine-tuned whole: the checkpoint carries the base’s files and goes on to the same weights', async () => {
    const rt = await gpuRuntime();
    const hfBase = await llamaChat({ kind: 'full' });
    const spec = { ...SPEC, sftSteps: 1, rlSteps: 0 };
    const session = await AgentSession.open(spec, host(rt), { hfBase });
    let bytes: Uint8Array;
    try {
      await session.sft(0, 1);
      bytes = await session.checkpoint();
    } finally {
      session.dispose();
    }
    expect(isLoraCheckpoint(bytes)).toBe(false);
    const ck = loadCheckpoint(bytes);
    expect(ck.extraMetadata?.tokenizer).toBeUndefined();
    expect(JSON.parse(ck.extraMetadata!.hf_base).name).toBe('llama-chat');
    expect(ck.params).not.toEqual(hfBase.params);
    const again = await AgentSession.open({ ...spec, sftSteps: 0 }, host(rt), bytes);
    try {
      expect(loadCheckpoint(await again.checkpoint()).params).toEqual(ck.params);
    } finally {
      again.dispose();
    }
  });

  it('the experiment with a LoRA policy: its saved adapters restore, so a run cut after the real arm’s first evaluation goes on to the same end', async () => {
    const rt = await gpuRuntime();
    const hfBase = await llamaChat({ kind: 'lora', rank: 2 });
    const start = { hfBase, lora: { rank: 2 } };
    const train = { ...SPEC, sftSteps: 2, rlSteps: 2, evalTasks: 1 };
    const spec = { train, arms: ['imitation' as const, 'real' as const], policy: { folder: 'llama-chat', lora: { rank: 2 } } };
    const go = async (state: AgentExperimentState, cutAfter = Infinity) => {
      const saved: AgentExperimentState[] = [];
      try {
        const final = await runAgentExperiment(
          state,
          {
            ...host(rt),
            async save(x) {
              saved.push(x);
              if (saved.length >= cutAfter) throw new Error('cut');
            },
          },
          start,
        );
        return { final, saved };
      } catch (e) {
        if ((e as Error).message !== 'cut') throw e;
        return { final: null, saved };
      }
    };
    const whole = (await go(newAgentExperiment(spec))).final!;
    expect(whole.done).toBe(true);
    expect(isLoraCheckpoint(whole.imitation!)).toBe(true);
    expect(whole.arms.map((a) => a.evals.map((e) => e.step))).toEqual([[0], [0, 1, 2]]);
    // Cut after the 4th save: untrained, imitation, the imitation arm, the real arm after step 1 (its cursor, an adapter with Adam's state).
    const cut = await go(newAgentExperiment(spec), 4);
    const last = cut.saved.at(-1)!;
    expect(last.cursor).toMatchObject({ arm: 1, step: 1 });
    expect(loadLoraCheckpoint(last.cursor!.checkpoint).optimizer).toBeDefined();
    const resumed = (await go(last)).final!;
    const bare = (x: AgentExperimentState) => ({ ...x, imitation: null, modelFinal: null, cursor: null });
    expect(bare(resumed)).toEqual(bare(whole));
    // A stored experiment of a Hugging Face policy needs its folder again.
    await expect(runAgentExperiment(last, { ...host(rt), save: async () => {} })).rejects.toThrow(
      /policy is the Hugging Face folder llama-chat, which was not given/,
    );
  }, 600_000);
});
