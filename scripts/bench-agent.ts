// Episodes per second of one RL step of `lwm agent train` (docs/method.md §13) with the world as
// the real environment of the tasks, as a world model from a local checkpoint, and as the same
// world model's ONNX export, same run, same policy, same tasks. The worlds are opened as `lwm
// agent train` opens them: the world model through openWorld (the checkpoint backend `lwm infer
// --backend local` and the app use, greedy, at most --world-max-tokens per observation, on a GPU
// device of its own; the export as `lwm infer --backend onnx` runs it, onnxruntime-web's WASM
// engine), the policy through gpuPolicy (moves of up to 16 episodes generated as one batch) on
// the command's runtime.
//
// The shapes are the command's defaults: the policy is AGENT_DEFAULTS' (bench preset, BPE of the
// imitation samples, T 64, 12 new tokens per move, temperature 1, up to 16 moves per batch); the
// world model has the quick recipe's shape (quick preset: 4 layers of width 128, BPE 1,024,
// context 256, the compact template) and answers with up to 128 tokens (--world-max-tokens'
// default). The default step is one GSPO group: 8 episodes of one terminal/write_word task
// (--episodes 16 is the defaults' whole step, 2 tasks; the policy batches moves by prompt length,
// so 2 tasks cost it about twice one). Both models have initParams weights: speed does not depend
// on what they say, but how long an episode runs does, so the episodes have a fixed shape, that of
// a policy that solves write_word: --turns answered actions (default 1, the task's solution),
// then a "done" move while AGENT_DEFAULTS.maxTurns allows one. The moves are generated on the
// GPU as in training, whatever they say (untrained weights seldom close a move within its budget,
// which would end the episode at once). An untrained world model never closes its observation,
// so each answer runs to --world-max-tokens; a trained one stops at the observation's end (the
// log prints how many tokens the real answers take).
//
// One RL step's episodes, timed: reset, the policy's moves, the world's answers, then each
// episode's success (the real check, or the world model's answer to the family's probe). The
// worlds alternate, so a burst of load hits each; the log splits each step's time into policy,
// world answers and success checks. Then what answering one episode at a time costs: the world
// model's generator answering the step's episodes one after another against as one batch.
//   npx tsx --import ./bin/raw-hook.mjs scripts/bench-agent.ts [--episodes 8] [--turns 1]
//     [--world-max-tokens 128] [--reps 1] [--family write_word] [--batch-tokens 32] [--json FILE]
// (`npm run bench -- --suite agent [--episodes N ...]` runs it with the GPU environment set.)
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWorld } from '../src/cli/commands/agentTrain.ts';
import { main as lwm } from '../src/cli/main.ts';
import { captureIO } from '../src/cli/testing.ts';
import { saveCheckpoint } from '../src/core/model/checkpoint.ts';
import { presetConfig } from '../src/core/model/config.ts';
import { keyedUniform } from '../src/core/random.ts';
import { BUILTIN_TEMPLATES, renderTrajectory } from '../src/core/templates/index.ts';
import { trainBpe } from '../src/core/tokenizer/index.ts';
import { localPromptIds } from '../src/backends/local.ts';
import { generateTrajectories } from '../src/envs/generate.ts';
import { listTasks, makeTaskEnv, type Task } from '../src/envs/tasks/index.ts';
import { closeNodeRuntimes, nodeRuntime } from '../src/gpu/node.ts';
import { GpuGenerator } from '../src/model/generate.ts';
import { initParams } from '../src/model/init.ts';
import { playEpisodes, realWorld, type AgentPolicy, type AgentWorld } from '../src/train/agent/episodes.ts';
import { AGENT_DEFAULTS, gpuPolicy, POLICY_BATCH, type AgentTrainSpec } from '../src/train/agent/run.ts';
import { ourCodec } from '../src/train/agent/codec.ts';
import { imitationSamples, policyTokenizer } from '../src/train/agent/samples.ts';
import { answerKey, simWorld } from '../src/train/agent/simWorld.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
function int(name: string, dflt: number, min: number): number {
  const v = Number(arg(name, String(dflt)));
  if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return v;
}
const spec: AgentTrainSpec = { ...AGENT_DEFAULTS, domain: 'terminal', families: [arg('family', 'write_word')] };
const episodes = int('episodes', spec.group, 1);
const turns = int('turns', 1, 1);
// Answered actions, then "done" while the episode may still move.
const maxTurns = Math.max(turns, spec.maxTurns);
const worldMaxTokens = int('world-max-tokens', 128, 1);
const reps = int('reps', 1, 1);
const batchTokens = int('batch-tokens', 32, 2);
const jsonFile = process.argv.includes('--json') ? arg('json', '') : '';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const record = (c: string, engine: string, metric: string, value: number, unit: string) => {
  if (jsonFile) appendFileSync(jsonFile, JSON.stringify({ suite: 'agent', case: c, engine, metric, value, unit }) + '\n');
};

// ---- the world model: a checkpoint of the quick recipe's shape, opened as --world opens one ----
const worldTok = trainBpe(
  generateTrajectories('terminal', 40, 3).map((t) => renderTrajectory(BUILTIN_TEMPLATES.compact, t)),
  { vocabSize: 1024 },
);
const worldConfig = presetConfig('quick', { vocabSize: worldTok.vocabSize });
const worldParams = initParams(worldConfig, 1);
const dir = mkdtempSync(join(tmpdir(), 'lwm-bench-agent-'));
const worldPath = join(dir, 'world.safetensors');
writeFileSync(
  worldPath,
  saveCheckpoint({
    config: worldConfig,
    params: worldParams,
    step: 0,
    extraMetadata: { stage: 'sft', tokenizer: JSON.stringify(worldTok.toJSON()), spec: JSON.stringify({ stage: 'sft', templates: { compact: 1 } }) },
  }),
);
// The same weights exported as `lwm export --to onnx` writes them, opened as --world ONNX_DIR opens
// them. Exported first: the command ends by closing the GPU devices it may have opened.
const onnxDir = join(dir, 'world-onnx');
const exportIo = captureIO();
if ((await lwm(['export', worldPath, '--to', 'onnx', '-o', onnxDir], exportIo)) !== 0) {
  process.stderr.write(exportIo.stderr);
  process.exit(1);
}
const world = await openWorld({ err: (m) => process.stderr.write(m) }, worldPath, worldMaxTokens);
if (!world) process.exit(1);
const onnxWorld = await openWorld({ err: (m) => process.stderr.write(m) }, onnxDir, worldMaxTokens);
if (!onnxWorld) process.exit(1);
type WorldEngine = 'lwm-world-model' | 'lwm-world-onnx';
const worlds: Record<WorldEngine, NonNullable<typeof world>> = { 'lwm-world-model': world, 'lwm-world-onnx': onnxWorld };
const ENGINES = ['real-env', 'lwm-world-model', 'lwm-world-onnx'] as const;
// The command's runtime, opened after the world as `lwm agent train` does (a device of its own while the world's is live).
const rt = await nodeRuntime();
console.log(`adapter: ${rt.describe()}`);

// ---- the policy and the RL step's tasks, as AgentSession.open and rlStep choose them ----
const trainTasks = listTasks({ split: 'train', count: spec.trainTasks, domains: [spec.domain], families: spec.families });
const tok = policyTokenizer(imitationSamples(trainTasks), spec.vocabSize, spec.layout);
const config = presetConfig(spec.preset, { vocabSize: tok.vocabSize, contextLength: spec.T });
const params = rt.storage('bench.agent.policy', initParams(config, spec.seed));
const gen = new GpuGenerator(rt, config, params, { maxSequences: POLICY_BATCH, maxLength: spec.T });
const tasks: Task[] = [];
for (let g = 0; tasks.length < episodes; g++) {
  const task = trainTasks[Math.floor(keyedUniform(`agent-rl:0:${g}`, spec.seed) * trainTasks.length)];
  for (let i = 0; i < spec.group && tasks.length < episodes; i++) tasks.push(task);
}
const keys = new Map(tasks.map((t) => [t.id, answerKey(t)]));
// Batches the policy generates (one per prompt length per turn, each of POLICY_BATCH rows), counted.
let policyBatches = 0;
const generateBatch = gen.generateBatch.bind(gen);
gen.generateBatch = (prompts, o, timing) => {
  policyBatches++;
  return generateBatch(prompts, o, timing);
};

type Engine = (typeof ENGINES)[number];
interface Round {
  ms: number;
  policyMs: number;
  batches: number;
  worldMs: number;
  checkMs: number;
  moves: number;
  answers: number;
  observations: string[];
  worldTokens: number;
}

/** One RL step's episodes in `engine`'s world, timed, with its time split into policy, world answers and success checks. */
async function round(engine: Engine, rep: number): Promise<Round> {
  const r: Round = { ms: 0, policyMs: 0, batches: 0, worldMs: 0, checkMs: 0, moves: 0, answers: 0, observations: [], worldTokens: 0 };
  const wm = engine === 'real-env' ? null : worlds[engine];
  // Tokens the world model generated: its decode steps, plus the one each prefill samples (the
  // checkpoint backend counts them; the ONNX one does not).
  const generated = () => (wm?.stats?.decodeTokens ?? 0) + (wm?.stats?.prompts ?? 0);
  const generated0 = generated();
  const batches0 = policyBatches;
  const timed = (w: AgentWorld): AgentWorld => ({
    reset: () => w.reset(),
    step: async (action) => {
      const t0 = performance.now();
      const o = await w.step(action);
      r.worldMs += performance.now() - t0;
      r.answers++;
      r.observations.push(o.observation);
      return o;
    },
  });
  const policy = gpuPolicy(gen, ourCodec(tok), spec, { temperature: spec.temperature, seed: spec.seed * 1009 + rep });
  const shaped: AgentPolicy = async (samples) => {
    const t0 = performance.now();
    const moves = await policy(samples);
    r.policyMs += performance.now() - t0;
    r.moves += moves.length;
    return moves.map((m, i) => ({ ...m, formed: true, action: samples[i].step < turns ? m.action.trim() || 'ls' : '' }));
  };
  const t0 = performance.now();
  const items = tasks.map((task) => {
    if (engine === 'real-env') {
      const w = realWorld(task);
      return { task, world: timed(w), success: async () => w.check().success };
    }
    const w = simWorld(task, wm!.backend, wm!.generate, keys.get(task.id));
    return { task, world: timed(w), success: async () => (await w.simCheck()).success };
  });
  await playEpisodes(items, shaped, maxTurns);
  const t1 = performance.now();
  for (const it of items) await it.success();
  r.checkMs = performance.now() - t1;
  r.ms = performance.now() - t0;
  r.worldTokens = generated() - generated0;
  r.batches = policyBatches - batches0;
  return r;
}

try {
  // Warm-up, untimed: the policy's graphs for the prompt lengths of the first repetition in the
  // real environment (the same seed: the same moves), the world model's pipelines.
  await round('real-env', 0);
  for (const w of Object.values(worlds)) {
    const warm = simWorld(tasks[0], w.backend, { ...w.generate, maxTokens: 2 }, keys.get(tasks[0].id));
    await warm.reset();
    await warm.step('ls');
  }

  const runs: Record<Engine, Round[]> = { 'real-env': [], 'lwm-world-model': [], 'lwm-world-onnx': [] };
  const before = { ...world.stats! };
  for (let rep = 0; rep < reps; rep++)
    for (const engine of ENGINES) {
      const x = await round(engine, rep);
      runs[engine].push(x);
      console.log(
        `${engine} rep ${rep + 1}: ${(x.ms / 1000).toFixed(2)} s for ${episodes} episodes (${x.moves} moves in ${x.batches} batches, ${x.answers} answers; policy ${(x.policyMs / 1000).toFixed(2)} s, world ${(x.worldMs / 1000).toFixed(2)} s, success checks ${(x.checkMs / 1000).toFixed(2)} s)`,
      );
    }
  const after = world.stats!;
  const c = `terminal/${spec.families[0]} ${episodes} episodes x ${turns} turns; policy ${spec.preset} T${spec.T} n${spec.maxNewTokens}; world quick n${worldMaxTokens}`;
  console.log(`\n${c}`);
  console.log('engine           episodes/s  ms/episode  policy ms/ep  answers ms/ep  check ms/ep  world tokens/answer');
  const eps: Partial<Record<Engine, number>> = {};
  for (const engine of ENGINES) {
    const xs = runs[engine];
    const ms = median(xs.map((x) => x.ms));
    const per = (f: (x: Round) => number) => median(xs.map(f)) / episodes;
    const probes = engine === 'real-env' ? 0 : episodes;
    const tokensPerAnswer = median(xs.map((x) => x.worldTokens / Math.max(1, x.answers + probes)));
    eps[engine] = episodes / (ms / 1000);
    record(c, engine, 'episodes_per_s', eps[engine]!, 'episodes/s');
    record(c, engine, 'ms_per_episode', ms / episodes, 'ms');
    // Where the world model's time goes (the real environment's is the policy's, to the millisecond).
    if (engine !== 'real-env') {
      record(
        c,
        engine,
        'policy_ms_per_episode',
        per((x) => x.policyMs),
        'ms',
      );
      record(
        c,
        engine,
        'answers_ms_per_episode',
        per((x) => x.worldMs),
        'ms',
      );
      record(
        c,
        engine,
        'probe_ms_per_episode',
        per((x) => x.checkMs),
        'ms',
      );
      if (engine === 'lwm-world-model') record(c, engine, 'world_tokens_per_answer', tokensPerAnswer, 'tokens');
    }
    console.log(
      `${engine.padEnd(15)}  ${eps[engine]!.toFixed(3).padStart(10)}  ${(ms / episodes).toFixed(0).padStart(10)}  ${per((x) => x.policyMs)
        .toFixed(0)
        .padStart(12)}  ${per((x) => x.worldMs)
        .toFixed(0)
        .padStart(13)}  ${per((x) => x.checkMs)
        .toFixed(0)
        .padStart(11)}  ${engine === 'lwm-world-model' ? tokensPerAnswer.toFixed(0).padStart(19) : ''}`,
    );
  }
  console.log(`world model ÷ real environment: ${(eps['lwm-world-model']! / eps['real-env']!).toFixed(4)}× the episodes per second`);
  console.log(
    `its ONNX export ÷ real environment: ${(eps['lwm-world-onnx']! / eps['real-env']!).toFixed(4)}×; ONNX export ÷ checkpoint: ${(eps['lwm-world-onnx']! / eps['lwm-world-model']!).toFixed(2)}×`,
  );
  const prompt = after.promptTokens - before.promptTokens;
  const decode = after.decodeTokens - before.decodeTokens;
  console.log(
    `world model: ${decode} tokens decoded at ${(decode / ((after.decodeMs - before.decodeMs) / 1000)).toFixed(1)} tokens/s, ${prompt} prompt tokens prefilled at ${(prompt / ((after.prefillMs - before.prefillMs) / 1000)).toFixed(0)} tokens/s, ${((100 * (after.reusedTokens - before.reusedTokens)) / Math.max(1, prompt)).toFixed(0)}% of the prompt tokens from kept prompts`,
  );
  // What a trained world model would generate: the real observations (and the probes' answers) in its tokens, plus the closing one.
  const realObs = runs['real-env'].flatMap((x) => x.observations);
  const tokensOf = (s: string) => worldTok.encode(s).length + 1;
  const probeTokens = [...keys.values()].map((k) => tokensOf(k.expected));
  console.log(
    `the real environment's answers take ${(realObs.reduce((n, o) => n + tokensOf(o), 0) / Math.max(1, realObs.length)).toFixed(1)} world-model tokens on average (with the closing token), its probe answers ${(probeTokens.reduce((a, b) => a + b, 0) / probeTokens.length).toFixed(1)}; the untrained world model generated ${worldMaxTokens} per answer`,
  );

  // ---- answering one at a time against a batch: the world model's generator, S prompts of one length ----
  const S = Math.min(episodes, POLICY_BATCH);
  const room = worldConfig.contextLength - worldMaxTokens;
  const sample = (t: Task) => {
    const sp = makeTaskEnv(t).reset().system_prompt;
    return { domain: t.domain, systemPrompt: sp, history: [], action: answerKey(t).probe };
  };
  const p0 = localPromptIds(worldTok, { sample: sample(tasks[0]), template: BUILTIN_TEMPLATES.compact }, room);
  const prompts = Array.from({ length: S }, (_, i) => {
    const ids = localPromptIds(worldTok, { sample: sample(trainTasks[i]), template: BUILTIN_TEMPLATES.compact }, room);
    // One length for the batch: each prompt cut or padded (with its own tokens) to the first one's.
    return Array.from({ length: p0.length }, (_, k) => ids[k % ids.length]);
  });
  const wparams = rt.storage('bench.agent.world', worldParams);
  const wgen = new GpuGenerator(rt, worldConfig, wparams, { maxSequences: S, maxLength: worldConfig.contextLength, prefixSlots: 0 });
  try {
    const o = { maxNewTokens: batchTokens, sampling: { temperature: 0 } };
    type Timing = { ms: number; prefillMs: number; decodeMs: number };
    const single = async (): Promise<Timing> => {
      const before = { ...wgen.stats };
      const t0 = performance.now();
      for (const p of prompts) for await (const _ of wgen.generate(p, o)) void _;
      return { ms: performance.now() - t0, prefillMs: wgen.stats.prefillMs - before.prefillMs, decodeMs: wgen.stats.decodeMs - before.decodeMs };
    };
    const batched = async (): Promise<Timing> => {
      const timing = { prefillMs: 0, decodeMs: 0 };
      const t0 = performance.now();
      await wgen.generateBatch(prompts, o, timing);
      return { ms: performance.now() - t0, ...timing };
    };
    // Warm-up: the pipelines of both shapes, a few tokens each.
    for await (const _ of wgen.generate(prompts[0], { ...o, maxNewTokens: 2 })) void _;
    await wgen.generateBatch(prompts, { ...o, maxNewTokens: 2 });
    const runs: Record<string, Timing[]> = { 'world-one-at-a-time': [], 'lwm-world-batched': [] };
    for (let rep = 0; rep < reps; rep++) {
      runs['world-one-at-a-time'].push(await single());
      runs['lwm-world-batched'].push(await batched());
    }
    // Every row runs to batchTokens (no stop ids): the first token comes from the prefill, the rest from decode steps.
    const bc = `world quick: ${S} answers of ${batchTokens} tokens to ${p0.length}-token prompts`;
    console.log(`\n${bc}`);
    console.log('engine               answers/s  prefill tokens/s  decode tokens/s');
    for (const [engine, xs] of Object.entries(runs)) {
      const answers = S / (median(xs.map((x) => x.ms)) / 1000);
      const prefill = (S * p0.length) / (median(xs.map((x) => x.prefillMs)) / 1000);
      const decode = (S * (batchTokens - 1)) / (median(xs.map((x) => x.decodeMs)) / 1000);
      record(bc, engine, 'answers_per_s', answers, 'answers/s');
      record(bc, engine, 'prefill_tokens_per_s', prefill, 'tokens/s');
      record(bc, engine, 'decode_tokens_per_s', decode, 'tokens/s');
      console.log(`${engine.padEnd(19)}  ${answers.toFixed(3).padStart(9)}  ${prefill.toFixed(0).padStart(16)}  ${decode.toFixed(1).padStart(15)}`);
    }
  } finally {
    wgen.dispose();
    rt.release(wparams);
  }
} finally {
  gen.dispose();
  rt.release(params);
  rt.dispose();
  world.dispose();
  onnxWorld.dispose();
  closeNodeRuntimes();
  rmSync(dir, { recursive: true, force: true });
}
