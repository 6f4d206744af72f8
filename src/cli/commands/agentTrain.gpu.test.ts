// `lwm agent train` on the GPU, end to end through the CLI at CI shapes: a fresh policy trained by
// imitation then GSPO in the real environment, and that policy going on by GSPO in a world model
// (copy-last), with the files each run writes and the summary it prints.
import { afterAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSafetensors } from '../../core/model/safetensors.ts';
import { generateTrajectories } from '../../envs/index.ts';
import { captureIO, microCheckpoint } from '../testing.ts';
import { main } from '../main.ts';
import agent, { openWorld } from './agentTrain.ts';
import type { AgentEval as Eval } from '../../train/agent/run.ts';

const TINY = [
  '--domain',
  'terminal',
  '--families',
  'write_word',
  '--tokens',
  '64',
  '--train-tasks',
  '4',
  '--eval-tasks',
  '2',
  '--tasks-per-step',
  '1',
  '--group',
  '2',
  '--batch',
  '4',
  '--max-turns',
  '1',
  '--max-new-tokens',
  '8',
  '--eval-every',
  '1',
  '--seed',
  '3',
];

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function train(...argv: string[]) {
  const io = captureIO();
  const code = await agent(['train', ...argv], io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('lwm agent train (micro, CI shapes)', () => {
  it('trains a fresh policy in the real environment, then goes on from its checkpoint in a world model', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-train-'));
    dirs.push(dir);
    const first = join(dir, 'real');
    const r = await train('--env', 'real', '--policy', 'micro', ...TINY, '--sft-steps', '2', '--rl-steps', '1', '-o', first);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(first, 'summary.json'), 'utf8'));
    // The printed summary is the stored one.
    expect(JSON.parse(r.stdout)).toEqual(summary);
    expect(summary).toMatchObject({ env: 'real', domain: 'terminal', families: ['write_word'], sftSteps: 2, rlSteps: 1, T: 64 });
    expect(summary.evals.map((e: Eval) => `${e.phase}:${e.step}`)).toEqual(['untrained:0', 'sft:2', 'rl:1']);
    expect(summary.start).toEqual(summary.evals[0]);
    expect(summary.final).toEqual(summary.evals[2]);
    for (const e of summary.evals as Eval[]) {
      expect(e.n).toBe(2);
      expect(e.successes).toBeGreaterThanOrEqual(0);
      expect(e.successes).toBeLessThanOrEqual(2);
      expect(e.sampledSuccesses).toBeGreaterThanOrEqual(0);
      // Which held-out tasks each solved, in order, for the paired test.
      expect(e.solved).toMatch(/^[01]{2}$/);
      expect([...e.solved!].filter((c) => c === '1').length).toBe(e.successes);
      expect([...e.sampledSolved!].filter((c) => c === '1').length).toBe(e.sampledSuccesses);
    }
    const { gained, lost } = summary.tasksVsStart;
    const solvedAt = (e: Eval, i: number) => e.solved![i] === '1';
    expect(gained).toBe([0, 1].filter((i) => solvedAt(summary.final, i) && !solvedAt(summary.start, i)).length);
    expect(lost).toBe([0, 1].filter((i) => !solvedAt(summary.final, i) && solvedAt(summary.start, i)).length);
    // McNemar's exact one-sided p: P(X ≥ gained), X binomial(gained + lost, ½).
    const disagree = gained + lost;
    const C = (n: number, k: number): number => (k === 0 || k === n ? 1 : C(n - 1, k - 1) + C(n - 1, k));
    let p = 0;
    for (let x = gained; x <= disagree; x++) p += C(disagree, x) / 2 ** disagree;
    expect(summary.pFinalVsStart).toBeCloseTo(p, 12);
    // No world model: no sim-to-real gap.
    expect(summary).not.toHaveProperty('simToRealGap');
    const metrics = (await readFile(join(first, 'metrics.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(metrics.filter((m) => m.phase === 'sft').map((m) => m.step)).toEqual([1, 2, 2]);
    const rl = metrics.find((m) => m.phase === 'rl' && 'reward' in m);
    expect(rl).toMatchObject({ step: 1 });
    for (const k of ['reward', 'success', 'format', 'loss', 'clip_fraction', 'mean_ratio', 'time_s']) expect(Number.isFinite(rl[k]), k).toBe(true);
    const policy = join(first, 'policy.safetensors');
    const st = readSafetensors(new Uint8Array(await readFile(policy)));
    expect(st.tensors.length).toBeGreaterThan(0);

    // Going on from that policy: the first evaluation is of it (phase start), greedy and on the
    // same held-out tasks, so it matches the first run's final one.
    const second = join(dir, 'model');
    const m = await train('--env', 'model', '--world', 'copy-last', '--policy', policy, ...TINY, '--sft-steps', '0', '--rl-steps', '1', '-o', second);
    expect(m.code, m.stderr).toBe(0);
    const s2 = JSON.parse(m.stdout);
    expect(s2).toMatchObject({ env: 'model', world: 'copy-last', sftSteps: 0, rlSteps: 1 });
    expect(s2.evals.map((e: Eval) => `${e.phase}:${e.step}`)).toEqual(['start:0', 'rl:1']);
    const { phase: _a, ...startRest } = s2.start as Eval;
    const { phase: _b, step: _c, ...firstFinal } = summary.final as Eval;
    expect({ ...startRest, step: 0 }).toEqual({ ...firstFinal, step: 0 });
    // Every simulated episode of the one RL step (1 task x group 2) is compared with the real check.
    expect(s2.simulatedEpisodes).toBe(2);
    expect(s2.simToRealGap).toBeGreaterThanOrEqual(0);
    expect(s2.simToRealGap).toBeLessThanOrEqual(1);
  });
});

const LLAMA_CHAT = new URL('../../model/fixtures/hf/llama-chat/', import.meta.url).pathname;
const HF_TINY = TINY.map((a, i) => (TINY[i - 1] === '--tokens' ? '96' : TINY[i - 1] === '--max-new-tokens' ? '20' : TINY[i - 1] === '--eval-tasks' ? '1' : a));

describe('lwm agent train with a Hugging Face policy (llama-chat, CI shapes)', () => {
  it('trains a LoRA adapter written as a PEFT folder, goes on from that folder, and refuses a folder without a chat template', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-hf-'));
    dirs.push(dir);
    const out = join(dir, 'lora');
    const r = await train('--env', 'real', '--policy', LLAMA_CHAT, '--lora', '2', ...HF_TINY, '--sft-steps', '1', '--rl-steps', '0', '-o', out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/llama-chat with a LoRA adapter of rank 2/);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ checkpoint: join(out, 'policy'), T: 96, tokenizer: 1461 });
    expect(summary.evals.map((e: Eval) => `${e.phase}:${e.step}`)).toEqual(['start:0', 'sft:1']);
    // PEFT's layout: the adapter's config names its base, which is how --policy OUT/policy finds it.
    const config = JSON.parse(await readFile(join(out, 'policy', 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({ peft_type: 'LORA', r: 2 });
    expect(config.base_model_name_or_path.replace(/\/$/, '')).toBe(LLAMA_CHAT.replace(/\/$/, ''));
    expect(readSafetensors(new Uint8Array(await readFile(join(out, 'policy', 'adapter_model.safetensors')))).tensors.length).toBeGreaterThan(0);

    // Going on from the adapter folder: its first evaluation is the first run's last one.
    const again = await train('--env', 'real', '--policy', join(out, 'policy'), ...HF_TINY, '--sft-steps', '0', '--rl-steps', '0', '-o', join(dir, 'again'));
    expect(again.code, again.stderr).toBe(0);
    const { phase: _a, ...start } = JSON.parse(again.stdout).start as Eval;
    const { phase: _b, step: _c, ...last } = summary.final as Eval;
    expect({ ...start, step: 0 }).toEqual({ ...last, step: 0 });
    await expect(train('--policy', join(out, 'policy'), '--lora', '4', ...HF_TINY, '-o', join(dir, 'x'))).rejects.toThrow(/is an adapter folder/);

    // A model folder without a chat template: said in one line, nothing trained.
    const bare = join(dir, 'bare');
    await mkdir(bare);
    for (const f of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json']) await copyFile(join(LLAMA_CHAT, f), join(bare, f));
    const { chat_template: _t, ...tokConfig } = JSON.parse(await readFile(join(LLAMA_CHAT, 'tokenizer_config.json'), 'utf8'));
    await writeFile(join(bare, 'tokenizer_config.json'), JSON.stringify(tokConfig));
    const b = await train('--policy', bare, ...HF_TINY, '--sft-steps', '1', '--rl-steps', '0', '-o', join(dir, 'bare-out'));
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/lwm agent train: the policy model .*bare: the model folder has no chat template/);

    // Memory is checked for the rollouts too, as the app checks it: their batch of 16 with its KV cache.
    const tight = await train('--policy', LLAMA_CHAT, ...HF_TINY, '--memory-gib', '0.004', '-o', join(dir, 'tight'));
    expect(tight.code).toBe(1);
    expect(tight.stderr).toMatch(
      /llama-chat\/? needs .* for full fine-tuning, context 96, batch 16, f32 weights \(.*KV cache .*\), more than the 4\.1 MiB budget/,
    );
  });
});

describe('the world model of lwm agent train --env model', () => {
  it("answers with at most a quarter of its context by default, as lwm infer does, leaving the rest to the prompt's history", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-world-'));
    dirs.push(dir);
    const ckpt = join(dir, 'world.safetensors');
    await writeFile(ckpt, microCheckpoint(generateTrajectories('terminal', 2, 5), { template: 'compact' }));
    const io = captureIO();
    const byDefault = await openWorld(io, ckpt);
    expect(byDefault, io.stderr).not.toBeNull();
    expect(byDefault!.contextLength).toBeGreaterThan(0);
    expect(byDefault!.generate).toMatchObject({ maxTokens: Math.floor(byDefault!.contextLength! / 4), temperature: 0 });
    byDefault!.dispose();
    const asked = await openWorld(io, ckpt, 7);
    expect(asked!.generate.maxTokens).toBe(7);
    asked!.dispose();
    expect(await openWorld(io, join(dir, 'missing.safetensors'))).toBeNull();
    expect(io.stderr).toMatch(/lwm agent train: --world .*missing\.safetensors: /);
  });

  it('lwm agent probe checks its simulated reward against the real check, by attempt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-probe-'));
    dirs.push(dir);
    const ckpt = join(dir, 'world.safetensors');
    await writeFile(ckpt, microCheckpoint(generateTrajectories('terminal', 2, 5), { template: 'compact' }));
    const io = captureIO();
    const code = await agent(
      ['probe', '--world', ckpt, '--domain', 'terminal', '--families', 'write_word', '--eval-tasks', '1', '--world-max-tokens', '4'],
      io,
    );
    expect(code, io.stderr).toBe(0);
    const out = JSON.parse(io.stdout);
    expect(out).toMatchObject({ domain: 'terminal', families: ['write_word'], tasks: 1 });
    expect(out.attempts.map((r: { attempt: string }) => r.attempt)).toEqual([
      'solver',
      'near miss 1',
      'near miss 2',
      'near miss 3',
      'near miss 4',
      'near miss 5',
      'nothing',
    ]);
    for (const r of out.attempts) {
      expect(r.episodes).toBe(1);
      expect(r.realSuccesses).toBe(r.attempt === 'solver' ? 1 : 0);
      // Agreement is the simulated reward equal to the real one, whatever this random model says.
      expect(r.agree).toBe(r.simSuccesses === r.realSuccesses ? 1 : 0);
    }
    expect(io.stderr).toMatch(/\| attempt \| episodes \| agree \| real successes \| simulated successes \|/);
  });

  it("takes the world model's ONNX export (onnxruntime's WASM engine) and gets its answers", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-agent-onnx-world-'));
    dirs.push(dir);
    const ckpt = join(dir, 'world.safetensors');
    await writeFile(ckpt, microCheckpoint(generateTrajectories('terminal', 2, 5), { template: 'compact' }));
    const onnxDir = join(dir, 'world-onnx');
    const exported = captureIO();
    expect(await main(['export', ckpt, '--to', 'onnx', '-o', onnxDir], exported), exported.stderr).toBe(0);
    const probe = async (world: string) => {
      const io = captureIO();
      const code = await agent(
        ['probe', '--world', world, '--domain', 'terminal', '--families', 'write_word', '--eval-tasks', '2', '--world-max-tokens', '6'],
        io,
      );
      expect(code, io.stderr).toBe(0);
      return { ...JSON.parse(io.stdout), stderr: io.stderr };
    };
    const viaOnnx = await probe(onnxDir);
    const viaCheckpoint = await probe(ckpt);
    expect(viaOnnx.world).toBe(onnxDir);
    // The same model in another engine: the same greedy answers, so the same simulated rewards and examples.
    expect(viaOnnx.attempts).toEqual(viaCheckpoint.attempts);
    const world = await openWorld(captureIO(), onnxDir, 5);
    expect(world!.ref.kind).toBe('onnx');
    world!.dispose();
  });
});
