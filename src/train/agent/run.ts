// `lwm agent train` on the GPU (docs/method.md §13): an agent policy (our GPT) learns tasks of one
// domain. (1) Imitation: SFT on the reference solvers' episodes of train-split tasks, each action
// a target (policy.ts's layout), plus a final "done" target (an empty action). (2) GSPO on episode
// rewards: G episodes of one task form a group, multi-turn rollouts against the world (here the
// real environment), reward = the task's success check plus a small format term (episodes.ts);
// every move of an episode is one GSPO sequence with its episode's advantage. (3) Every N steps,
// and before and after each stage, greedy episodes on held-out tasks in the real environment.
// The policy is a model of ours, or a Hugging Face folder's model in its chat format (codec.ts),
// trained whole or through a LoRA adapter.
import { saveCheckpoint, loadCheckpoint } from '../../core/model/checkpoint.ts';
import { presetConfig, type ModelConfig, type PresetName } from '../../core/model/config.ts';
import { lrAt, type LrSchedule } from '../../core/model/optim.ts';
import { keyedUniform } from '../../core/random.ts';
import type { KnownDomain } from '../../core/schema/types.ts';
import { Tokenizer } from '../../core/tokenizer/index.ts';
import { isLoraCheckpoint, loadLoraCheckpoint, saveLoraCheckpoint } from '../../model/hf/adapter.ts';
import { baseFromJson, baseToJson, openHfBase, type HfBase } from '../../model/hf/base.ts';
import { initLora, loraLayout, loraSettings, type LoraLayout } from '../../model/lora.ts';
import { chatCodec, ourCodec, type PolicyCodec } from './codec.ts';
import { imitationSamples, movesBatch, policyTokenizer } from './samples.ts';
import { fitPolicyPrompt, listTasks, policyTarget, type PolicyLayout, type PolicySample, type Task } from '../../envs/tasks/index.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { GpuGenerator } from '../../model/generate.ts';
import { initParams } from '../../model/init.ts';
import { GpuTrainer } from '../../model/trainer.ts';
import { UserFacingError } from '../context.ts';
import type { GenerateOptions, LwmBackend } from '../../core/backend.ts';
import {
  episodeAdvantages,
  episodeReward,
  pairedOneSided,
  playEpisodes,
  realCheck,
  realWorld,
  simToRealGap,
  type AgentEpisode,
  type AgentPolicy,
  type AgentWorld,
  type PolicyMove,
} from './episodes.ts';
import { answerKey, simWorld } from './simWorld.ts';
import { BUDGET_FLOOR, mostTokens } from './budgets.ts';

export interface AgentTrainSpec {
  domain: KnownDomain;
  /** Task families of the domain to train and evaluate on. */
  families: string[];
  /** A fresh model of this preset (with `from`: ignored). */
  preset: PresetName;
  vocabSize: number;
  /** Tokens per sequence: prompt and action. */
  T: number;
  /** The policy's prompt layout (envs/tasks/policy.ts): `compact` (goal and history) or `full`. */
  layout: PolicyLayout;
  /** Train-split tasks whose solver episodes the SFT stage imitates (and RL draws from). */
  trainTasks: number;
  /** Held-out tasks of each evaluation. */
  evalTasks: number;
  sftSteps: number;
  rlSteps: number;
  /** Rows per optimizer step (SFT rows; RL: moves per GSPO update). */
  batch: number;
  /** Episodes per task in a GSPO group. */
  group: number;
  /** Groups (tasks) per RL step. */
  tasksPerStep: number;
  sftLr: number;
  rlLr: number;
  /**
   * RL steps over which each GSPO stage's learning rate rises linearly to rlLr. A stage starts
   * with a fresh Adam, whose first updates move every weight by about the full learning rate
   * whatever its gradient. Absent in runs stored before it existed: no warm-up.
   */
  rlWarmup?: number;
  temperature: number;
  /** Most tokens of one action (its end-of-turn token included). */
  maxNewTokens: number;
  maxTurns: number;
  /** Evaluate every N RL steps (and after the last). */
  evalEvery: number;
  seed: number;
  /** Control run: each step's episode rewards are permuted before the advantages (no link between an episode and its reward). */
  shuffleReward?: boolean;
}

export const AGENT_DEFAULTS: Omit<AgentTrainSpec, 'domain' | 'families'> = {
  // 2 layers of width 64, 4 heads, learned positions. Measured on terminal/write_word (PyTorch,
  // the same rows): it copies the goal's word and file from about 250–300 imitation steps on;
  // width 32 (micro) needs twice as many (docs/method.md §13).
  preset: 'bench',
  // Enough merges that each goal word is one token; the compact layout's corpus stops merging
  // near 530 tokens, so this is a ceiling.
  vocabSize: 1024,
  // The compact layout's prompts of a level-1 task (goal and one turn) take 25–40 tokens; harder
  // families need more (--tokens), and their errors say so.
  T: BUDGET_FLOOR.T,
  layout: 'compact',
  trainTasks: 1024,
  evalTasks: 32,
  sftSteps: BUDGET_FLOOR.sftSteps,
  rlSteps: 10,
  batch: 16,
  group: 8,
  // 64 episodes a step: with 16 (2 tasks) the RL stage moved nothing at 3e-4 in 20 steps (method §13).
  tasksPerStep: 8,
  sftLr: 3e-3,
  // Measured on write_word from a 400-step imitation policy (docs/method.md §13): at 1e-3 the
  // updates wreck the policy (64/64 held-out greedy successes fell to 40 in 10 steps, and to 10
  // with shuffled rewards); at 3e-4 the real reward holds it and raises its sampled success while
  // the shuffled control falls; at 1e-4 nothing moves in 20 steps.
  rlLr: 3e-4,
  // From a 300-step imitation policy (23/64 held-out), 30 steps at 3e-4 without warm-up fell to
  // 5/64 in ten steps and ended at 19; with 5 warm-up steps they rose to 27 and ended at 30
  // (8 tasks gained, 1 lost: McNemar p = 0.02), while the shuffled-reward control fell (method §13).
  rlWarmup: 5,
  temperature: 1,
  maxNewTokens: BUDGET_FLOOR.maxNewTokens,
  maxTurns: 2,
  evalEvery: 5,
  seed: 0,
};

export interface AgentHost {
  rt: GpuRuntime;
  /**
   * A world model that answers the RL episodes' actions instead of the real environment
   * (--env model); the reward then comes from its simulated check. Evaluation stays real.
   */
  world?: { backend: LwmBackend; options: Omit<GenerateOptions, 'signal'> };
  log(message: string): void;
  /** One metrics line: phase untrained (or start, from a policy checkpoint) | sft | rl, its step, its values. */
  metric(phase: string, step: number, values: Record<string, number>): void;
}

/** One evaluation: greedy episodes on the held-out tasks, checked in the real environment. */
export interface AgentEval {
  phase: string;
  step: number;
  success: number;
  successes: number;
  n: number;
  format: number;
  turns: number;
  /**
   * The same held-out tasks played once more with actions sampled at the rollout temperature
   * (the distribution GSPO trains), with one fixed seed for every evaluation: RL can raise this
   * while greedy success is already at its ceiling. Absent in evaluations stored before it existed.
   */
  sampledSuccesses?: number;
  /** Per held-out task in order, '1' if the greedy episode solved it (for paired tests; absent in evaluations stored before it). */
  solved?: string;
  /** The same for the sampled episodes. */
  sampledSolved?: string;
}

/** An evaluation made now, with its per-task outcomes (only stored ones can lack them). */
export type FreshAgentEval = AgentEval & { solved: string; sampledSolved: string };

export interface AgentSummary {
  domain: string;
  families: string[];
  config: ModelConfig;
  tokenizer: number;
  T: number;
  sftSteps: number;
  rlSteps: number;
  evals: AgentEval[];
  /**
   * The first evaluation, before any training: of the untrained policy (phase `untrained`), or,
   * going on from a policy checkpoint, of that policy (phase `start`).
   */
  start: AgentEval;
  final: AgentEval;
  /**
   * One-sided p that the final held-out success exceeds the starting one: McNemar's exact test on
   * the held-out tasks (the same in every evaluation), by `tasksVsStart`.
   */
  pFinalVsStart: number;
  /** Held-out tasks the final policy solves that the starting one did not (gained), and the reverse (lost). */
  tasksVsStart: { gained: number; lost: number };
  /** --env model: the share of simulated RL episodes whose simulated success the real check disagrees with. */
  simToRealGap?: number | null;
  simulatedEpisodes?: number;
  checkpoint: Uint8Array;
  seconds: number;
}

/** An SFT batch: B rows, loss on each row's target tokens only. */
function sftBatch(rows: { ids: number[]; promptLength: number }[], B: number, T: number, pad: number) {
  const inputs = new Uint32Array(B * T).fill(pad);
  const targets = new Uint32Array(B * T).fill(pad);
  const weights = new Float32Array(B * T);
  rows.forEach((r, b) => {
    for (let t = 0; t + 1 < r.ids.length && t < T; t++) {
      inputs[b * T + t] = r.ids[t];
      targets[b * T + t] = r.ids[t + 1];
      weights[b * T + t] = t + 1 >= r.promptLength ? 1 : 0;
    }
  });
  return { B, T, inputs, targets, weights };
}

/** The policy's prompt ids for a sample: fitted to T − maxNewTokens (the empty target's end-of-action token counted). Exported for scripts/agent-imitation-rows.ts. */
export function policyPrompt(s: PolicySample, codec: PolicyCodec, spec: Pick<AgentTrainSpec, 'T' | 'maxNewTokens' | 'layout'>): number[] {
  return codec.encodeParts(fitPolicyPrompt({ ...s, target: '' }, codec, spec.T - spec.maxNewTokens + 1, spec.layout, codec.format).prompt);
}

/** Sequences a policy rolls out side by side (the generator's batch). */
export const POLICY_BATCH = 16;

/**
 * The model's policy: prompts fitted to T − maxNewTokens; the moves of many episodes are
 * generated in batches of prompts of one length (generateBatch), each sampled on its own row.
 * Exported for the `agent` benchmark (scripts/bench-agent.ts), which plays an RL step's episodes with it.
 */
export function gpuPolicy(gen: GpuGenerator, codec: PolicyCodec, spec: AgentTrainSpec, sampling: { temperature: number; seed: number }): AgentPolicy {
  const endAction = codec.endAction;
  const stop = [...codec.stops];
  let call = 0;
  return async (samples) => {
    const prompts = samples.map((s) => policyPrompt(s, codec, spec));
    const byLength = new Map<number, number[]>();
    prompts.forEach((p, i) => {
      const same = byLength.get(p.length);
      if (same) same.push(i);
      else byLength.set(p.length, [i]);
    });
    const out: PolicyMove[] = new Array(samples.length);
    for (const all of byLength.values()) {
      for (let c = 0; c < all.length; c += gen.limits.maxSequences) {
        const idx = all.slice(c, c + gen.limits.maxSequences);
        const seed = (sampling.seed * 7919 + call++) >>> 0;
        const o = { maxNewTokens: spec.maxNewTokens, sampling: { temperature: sampling.temperature, seed }, stop };
        // Always a full batch (copies of the first prompt fill it): one compiled shape per prompt length, whatever the count.
        const rows = Array.from({ length: gen.limits.maxSequences }, (_, k) => prompts[idx[k] ?? idx[0]]);
        const responses = await gen.generateBatch(rows, o);
        idx.forEach((i, k) => {
          const tokens = responses[k];
          const formed = tokens.length > 0 && tokens[tokens.length - 1] === endAction;
          const body = formed ? tokens.slice(0, -1) : tokens.filter((t) => !stop.includes(t));
          out[i] = { action: formed && body.length === 0 ? '' : codec.decode(body).trim() || (formed ? '' : ' '), formed, tokens, prompt: prompts[i] };
        });
      }
    }
    return out;
  };
}

/** Greedy episodes on held-out tasks in the real environment. */
async function evaluate(
  gen: GpuGenerator,
  codec: PolicyCodec,
  spec: AgentTrainSpec,
  tasks: readonly Task[],
  phase: string,
  step: number,
  log: (m: string) => void,
): Promise<FreshAgentEval> {
  const worlds = tasks.map((task) => ({ task, world: realWorld(task) }));
  const eps = await playEpisodes(worlds, gpuPolicy(gen, codec, spec, { temperature: 0, seed: 0 }), spec.maxTurns);
  const succ = worlds.map((w) => w.world.check().success);
  const successes = succ.filter(Boolean).length;
  // Sampled: the seed is the evaluation's own (never an RL step's), the same at every evaluation.
  const sampledWorlds = tasks.map((task) => ({ task, world: realWorld(task) }));
  await playEpisodes(sampledWorlds, gpuPolicy(gen, codec, spec, { temperature: spec.temperature, seed: EVAL_SAMPLE_SEED + spec.seed }), spec.maxTurns);
  const sampledSucc = sampledWorlds.map((w) => w.world.check().success);
  const sampledSuccesses = sampledSucc.filter(Boolean).length;
  const bits = (xs: boolean[]) => xs.map((x) => (x ? '1' : '0')).join('');
  // A few episodes in words, so a log shows what the policy does, not only how often it works.
  for (const [i, e] of eps.slice(0, 3).entries())
    log(`${phase} ${step}: ${e.task.goal} → ${JSON.stringify(e.moves.map((m) => m.action))} ${succ[i] ? 'solved' : 'not solved'}`);
  const mean = (f: (e: AgentEpisode) => number) => eps.reduce((n, e) => n + f(e), 0) / Math.max(1, eps.length);
  return {
    phase,
    step,
    success: successes / tasks.length,
    successes,
    n: tasks.length,
    format: mean((e) => episodeReward(false, e.moves).format),
    turns: mean((e) => e.turns.length),
    sampledSuccesses,
    solved: bits(succ),
    sampledSolved: bits(sampledSucc),
  };
}

/** The sampling seed of held-out evaluations (far from the RL steps' seeds, seed × 1009 + step). */
const EVAL_SAMPLE_SEED = 1_000_003;

function checkSpec(s: AgentTrainSpec): void {
  const ints: [keyof AgentTrainSpec, number][] = [
    ['trainTasks', 1],
    ['evalTasks', 1],
    ['sftSteps', 0],
    ['rlSteps', 0],
    ['batch', 1],
    ['group', 2],
    ['tasksPerStep', 1],
    ['maxNewTokens', 2],
    ['maxTurns', 1],
    ['evalEvery', 1],
    ['T', 16],
  ];
  for (const [k, min] of ints) {
    const v = s[k] as number;
    if (!Number.isInteger(v) || v < min) throw new UserFacingError(`${k} must be an integer ≥ ${min}; got ${v}`);
  }
  if (s.rlWarmup !== undefined && !(Number.isInteger(s.rlWarmup) && s.rlWarmup >= 0))
    throw new UserFacingError(`rlWarmup must be an integer ≥ 0; got ${s.rlWarmup}`);
  if (!(s.temperature > 0)) throw new UserFacingError(`temperature must be above 0 (GSPO's rollouts are sampled); got ${s.temperature}`);
  if (s.maxNewTokens >= s.T - 8) throw new UserFacingError(`maxNewTokens (${s.maxNewTokens}) leaves no room for a prompt in ${s.T} tokens`);
}

/** A Hugging Face folder's model as the policy: its base (text files and weights), trained whole or through a LoRA adapter. */
export interface AgentHfStart {
  hfBase: { base: HfBase; params: Float32Array };
  /** A fresh adapter of these settings; absent (and no `adapter`): the model is fine-tuned whole. */
  lora?: { rank: number; alpha?: number; targets?: string[]; baseWeights?: 'f32' | 'f16' };
  /** A LoRA checkpoint of an adapter on this base to go on from (its own settings). */
  adapter?: Uint8Array;
}

/** Where a policy starts: a checkpoint's bytes, or a Hugging Face folder's model. */
export type AgentStart = Uint8Array | AgentHfStart;

/** What a policy is: a model of ours with its tokenizer, a Hugging Face model fine-tuned whole, or an adapter on one. */
type PolicyKind =
  | { kind: 'ours'; tok: Tokenizer }
  | { kind: 'hf'; base: HfBase }
  | { kind: 'lora'; base: HfBase; layout: LoraLayout; baseWeights: 'f32' | 'f16' };

function describePolicy(k: PolicyKind): string {
  if (k.kind === 'ours') return 'model';
  if (k.kind === 'hf') return `${k.base.name} (fine-tuned whole)`;
  return `${k.base.name} with a LoRA adapter of rank ${k.layout.settings.rank}`;
}

interface PreparedPolicy {
  kind: PolicyKind;
  codec: PolicyCodec;
  config: ModelConfig;
  /** The model's weights (LoRA: the frozen base's). */
  params: Float32Array;
  /** LoRA: the adapter's weights. */
  adapter?: Float32Array;
}

/** A Hugging Face base's config and chat codec; its problems as the user's. */
function openBase(base: HfBase): { config: ModelConfig; codec: PolicyCodec } {
  try {
    const o = openHfBase(base);
    return { config: o.config, codec: chatCodec(o.tokenizer, o.stopIds) };
  } catch (e) {
    throw new UserFacingError(`the policy model ${base.name}: ${(e as Error).message}`);
  }
}

/** The policy's kind, codec, config and starting weights (see AgentSession.open). */
function preparePolicy(spec: AgentTrainSpec, samples: readonly PolicySample[], from: AgentStart | undefined): PreparedPolicy {
  if (from === undefined) {
    const tok = policyTokenizer(samples, spec.vocabSize, spec.layout);
    const config = presetConfig(spec.preset, { vocabSize: tok.vocabSize, contextLength: spec.T });
    return { kind: { kind: 'ours', tok }, codec: ourCodec(tok), config, params: initParams(config, spec.seed) };
  }
  if (from instanceof Uint8Array) {
    if (isLoraCheckpoint(from))
      throw new UserFacingError('the starting policy is a LoRA adapter: it goes on from its folder (adapter_config.json beside it), with its base model');
    const ck = loadCheckpoint(from, { source: 'the starting policy' });
    const hfBase = ck.extraMetadata?.hf_base;
    if (hfBase) {
      let base: HfBase;
      try {
        base = baseFromJson(hfBase);
      } catch (e) {
        throw new UserFacingError(`the starting policy: ${(e as Error).message}`);
      }
      const { codec } = openBase(base);
      return { kind: { kind: 'hf', base }, codec, config: ck.config, params: ck.params };
    }
    const tj = ck.extraMetadata?.tokenizer;
    if (!tj) throw new UserFacingError('the starting policy has no tokenizer in its metadata; it was not written by LWM Studio training');
    const tok = Tokenizer.fromJSON(JSON.parse(tj));
    return { kind: { kind: 'ours', tok }, codec: ourCodec(tok), config: ck.config, params: ck.params };
  }
  const { base, params } = from.hfBase;
  const { codec, config } = openBase(base);
  const baseWeights = from.lora?.baseWeights ?? 'f32';
  if (from.adapter) {
    let ck;
    try {
      ck = loadLoraCheckpoint(from.adapter, 'the starting adapter');
    } catch (e) {
      throw new UserFacingError((e as Error).message);
    }
    if (JSON.stringify(Object.entries(ck.config).sort()) !== JSON.stringify(Object.entries(config).sort()))
      throw new UserFacingError(`the starting adapter was trained on another model than ${base.name}`);
    const layout = loraLayout(ck.config, ck.settings);
    return { kind: { kind: 'lora', base, layout, baseWeights }, codec, config, params, adapter: ck.lora };
  }
  if (from.lora) {
    let layout: LoraLayout;
    try {
      layout = loraLayout(config, loraSettings(from.lora.rank, from.lora.alpha, from.lora.targets));
    } catch (e) {
      throw new UserFacingError((e as Error).message);
    }
    return { kind: { kind: 'lora', base, layout, baseWeights }, codec, config, params, adapter: initLora(layout, spec.seed) };
  }
  return { kind: { kind: 'hf', base }, codec, config, params };
}

/** What an RL step measured: its metrics line and, with a simulated world, the sim-to-real pairs. */
export interface AgentRlStep {
  values: Record<string, number>;
  gap: { disagree: number; n: number } | null;
}

/**
 * One policy being trained: its tokenizer, model, generator, train and held-out tasks and
 * imitation rows. `runAgentTraining` and the four-agent experiment (experiment.ts) drive it
 * phase by phase: evaluations, SFT steps, RL steps in the real or the simulated world.
 */
export class AgentSession {
  private gapKeys = new Map<string, ReturnType<typeof answerKey>>();
  private epochOrder: { epoch: number; order: number[] } | null = null;

  private constructor(
    readonly spec: AgentTrainSpec,
    readonly host: AgentHost,
    readonly codec: PolicyCodec,
    /** What the policy is, which says how it is saved. */
    private readonly kind: PolicyKind,
    readonly config: ModelConfig,
    readonly trainTasks: Task[],
    readonly evalTasks: Task[],
    private readonly rows: { ids: number[]; promptLength: number }[],
    private readonly model: GpuTrainer,
    private readonly gen: GpuGenerator,
  ) {}

  /**
   * Tasks, tokenizer, model and rows of a run. `from`: a policy to go on from: a checkpoint of
   * ours (its tokenizer and weights, or a Hugging Face model's full fine-tune with its base's
   * files), or a Hugging Face folder's model (whole, a fresh adapter, or an adapter to go on from).
   */
  static async open(spec: AgentTrainSpec, host: AgentHost, from?: AgentStart): Promise<AgentSession> {
    checkSpec(spec);
    const trainTasks = listTasks({ split: 'train', count: spec.trainTasks, domains: [spec.domain], families: spec.families });
    const evalTasks = listTasks({
      split: 'heldout',
      count: Math.ceil(spec.evalTasks / spec.families.length),
      domains: [spec.domain],
      families: spec.families,
    }).slice(0, spec.evalTasks);
    if (host.world)
      for (const f of spec.families) {
        try {
          answerKey(trainTasks.find((t) => t.family === f)!);
        } catch (e) {
          throw new UserFacingError(`--env model: ${(e as Error).message}`);
        }
      }
    const samples = imitationSamples(trainTasks);
    if (!samples.length) throw new UserFacingError('the reference solvers solved none of the train tasks: nothing to imitate');
    const p = preparePolicy(spec, samples, from);
    const { codec, config } = p;
    const T = Math.min(spec.T, config.contextLength);
    const run = { ...spec, T };
    // Training rows end where the policy's prompts end when it acts: the same fit, the same
    // budget (T − maxNewTokens), so a target sits at the positions the action will. Fitting a row
    // to the whole T put every target at the sequence's end, and the learned positions made the
    // end of the sequence, not the prompt, what the policy answered.
    // Every action to imitate must fit the action budget: the longest is named, with the budget it needs.
    const targets = samples.map((s) => codec.encodeParts(policyTarget(s, codec.format)));
    const action = mostTokens(samples, (_, i) => targets[i].length);
    if (action.tokens > spec.maxNewTokens)
      throw new UserFacingError(
        `the longest action to imitate (${action.source} step ${action.step}) takes ${action.tokens} tokens, more than the ${spec.maxNewTokens} an action may take: raise the action budget to at least ${action.tokens} (--max-new-tokens; Action tokens in the Sim RL panel)`,
      );
    const rows = samples.map((s, i) => {
      let prompt: number[];
      try {
        prompt = policyPrompt(s, codec, run);
      } catch (e) {
        throw new UserFacingError(
          `${(e as Error).message}, which is the policy context less the action budget (${T} − ${spec.maxNewTokens} + 1): raise the policy context (--tokens; Policy context (T) in the Sim RL panel)${T < spec.T ? `; the model's context is ${T}` : ''}`,
        );
      }
      return { ids: [...prompt, ...targets[i]], promptLength: prompt.length };
    });
    const lora = p.kind.kind === 'lora' ? p.kind : null;
    host.log(
      `agent: ${trainTasks.length} train tasks (${samples.length} imitation samples), ${evalTasks.length} held-out tasks; ${describePolicy(p.kind)} ${JSON.stringify(config)}; tokenizer ${codec.vocabSize} tokens; ${T} tokens per sequence`,
    );
    const model = await GpuTrainer.create(host.rt, config, {
      batch: spec.batch,
      T,
      rl: { Lmax: spec.maxNewTokens, temperature: spec.temperature },
      ...(lora && { lora: lora.layout, weights: lora.baseWeights }),
    });
    let gen: GpuGenerator | undefined;
    try {
      model.setParams(p.params);
      if (lora) model.model.setLora(p.adapter!);
      const adapter = model.model.adapter;
      gen = new GpuGenerator(host.rt, config, model.model.params, {
        maxSequences: POLICY_BATCH,
        maxLength: T,
        ...(lora && adapter && { lora: { layout: lora.layout, params: adapter.only } }),
      });
    } catch (e) {
      model.dispose();
      throw e;
    }
    return new AgentSession(run, host, codec, p.kind, config, trainTasks, evalTasks, rows, model, gen);
  }

  /** Greedy episodes on the held-out tasks in the real environment, reported as a metric of `phase`. */
  async evaluate(phase: string, step: number): Promise<FreshAgentEval> {
    const ev = await evaluate(this.gen, this.codec, this.spec, this.evalTasks, phase, step, this.host.log);
    this.host.metric(phase, step, {
      eval_success: ev.success,
      eval_successes: ev.successes,
      eval_tasks: ev.n,
      eval_format: ev.format,
      eval_turns: ev.turns,
      eval_sampled_successes: ev.sampledSuccesses ?? 0,
    });
    return ev;
  }

  /** Imitation steps [from, to) of the SFT schedule (its length is spec.sftSteps). */
  async sft(from: number, to: number, phase = 'sft'): Promise<void> {
    const { spec } = this;
    const pad = this.codec.pad;
    const schedule = { maxLr: spec.sftLr, minLr: spec.sftLr / 10, warmupSteps: Math.min(10, spec.sftSteps), totalSteps: spec.sftSteps };
    for (let step = from; step < to; step++) {
      // Each step's rows come from a keyed shuffle of the epoch it falls in: any step range gives the same batches.
      const batch: typeof this.rows = [];
      for (let b = 0; b < spec.batch; b++) {
        const k = step * spec.batch + b;
        const epoch = Math.floor(k / this.rows.length);
        if (this.epochOrder?.epoch !== epoch) this.epochOrder = { epoch, order: shuffled(this.rows.length, `agent-sft:${spec.seed}:${epoch}`) };
        batch.push(this.rows[this.epochOrder.order[k % this.rows.length]]);
      }
      const r = await this.model.trainStep(sftBatch(batch, spec.batch, spec.T, pad), lrAt(step, schedule), { loss: true });
      this.host.metric(phase, step + 1, { loss: r.loss ?? NaN });
    }
  }

  /**
   * RL step `step` of a schedule of `total` steps: G sampled episodes on each of tasksPerStep
   * train tasks, in the real environment or the world model (`simulated`), then GSPO on their
   * moves; with `shuffle`, the rewards permuted across the step's episodes first (the control).
   */
  async rlStep(step: number, total: number, simulated: boolean, phase = 'rl', shuffle = this.spec.shuffleReward ?? false): Promise<AgentRlStep> {
    const { spec, host } = this;
    const G = spec.group;
    if (simulated && !host.world) throw new UserFacingError('an RL step in the world model needs a world model (--world)');
    // A simulated episode's check also returns the world model's answer to the probe (`said`), to show where it misled.
    const items: { task: Task; world: AgentWorld; check: () => Promise<{ success: boolean; said?: string }> }[] = [];
    for (let g = 0; g < spec.tasksPerStep; g++) {
      const task = this.trainTasks[Math.floor(keyedUniform(`agent-rl:${step}:${g}`, spec.seed) * this.trainTasks.length)];
      for (let i = 0; i < G; i++) {
        if (simulated && host.world) {
          const key = this.gapKeys.get(task.id) ?? this.gapKeys.set(task.id, answerKey(task)).get(task.id);
          const w = simWorld(task, host.world.backend, host.world.options, key);
          items.push({ task, world: w, check: async () => w.simCheck().then((c) => ({ success: c.success, said: c.observation })) });
        } else {
          const w = realWorld(task);
          items.push({ task, world: w, check: async () => ({ success: w.check().success }) });
        }
      }
    }
    const eps = await playEpisodes(
      items,
      gpuPolicy(this.gen, this.codec, spec, { temperature: spec.temperature, seed: spec.seed * 1009 + step }),
      spec.maxTurns,
    );
    const checks: { success: boolean; said?: string }[] = [];
    for (const it of items) checks.push(await it.check());
    const wins = checks.map((c) => c.success);
    const parts = eps.map((e, i) => episodeReward(wins[i], e.moves));
    // With a simulated world: the real check of the same actions, for the sim-to-real gap.
    const verdicts = simulated
      ? eps.map((e) =>
          realCheck(
            e.task,
            e.turns.map((t) => t.action),
          ),
        )
      : null;
    const real = verdicts?.map((v) => v.success) ?? null;
    const gap = real ? simToRealGap(eps.map((_, i) => ({ sim: wins[i], real: real[i] }))) : null;
    if (verdicts && gap) {
      // Where the simulation misled the agent this step: one episode it rewarded and the real check did not.
      const i = eps.findIndex((_, k) => wins[k] && !verdicts[k].success);
      if (i >= 0) {
        const probe = this.gapKeys.get(eps[i].task.id)!.probe;
        host.log(
          `[${phase} ${step + 1}] rewarded by the simulation alone (${gap.simOnly} of ${eps.length}), e.g. ${eps[i].task.id}, "${eps[i].task.goal}": ${JSON.stringify(eps[i].turns.map((t) => t.action))}, then ${probe} → the world model ${JSON.stringify(checks[i].said ?? '')}; the real check: ${verdicts[i].reason}`,
        );
      }
    }
    const adv = stepAdvantages(
      parts.map((p) => p.reward),
      G,
      shuffle ? `agent-shuffle:${spec.seed}:${step}` : null,
    );
    // Every move of an episode is one sequence with the episode's advantage (normalised in its group).
    const moves: { prompt: number[]; response: number[]; adv: number }[] = [];
    eps.forEach((e, i) => {
      for (const m of e.moves) if (m.tokens.length) moves.push({ prompt: m.prompt, response: m.tokens, adv: adv[i] });
    });
    const stats = await gspoMoves(this.model, moves, spec, this.codec.pad, lrAt(step, rlSchedule(spec, total)));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const values: Record<string, number> = {
      reward: mean(parts.map((p) => p.reward)),
      success: mean(parts.map((p) => p.success)),
      format: mean(parts.map((p) => p.format)),
      turns: mean(eps.map((e) => e.turns.length)),
      moves: moves.length,
      ...(gap &&
        real && {
          real_success: real.filter(Boolean).length / eps.length,
          sim_real_gap: gap.gap,
          sim_only: gap.simOnly,
          real_only: gap.realOnly,
        }),
      ...stats,
    };
    host.metric(phase, step + 1, values);
    return { values, gap: gap && { disagree: gap.simOnly + gap.realOnly, n: gap.n } };
  }

  /**
   * The policy as a checkpoint: weights, tokenizer and settings (ours); the weights and the base's
   * files (a Hugging Face model fine-tuned whole); or the adapter in PEFT's names (LoRA). With
   * `optimizer`, Adam's state too (to resume).
   */
  async checkpoint(optimizer = false): Promise<Uint8Array> {
    const k = this.kind;
    const spec = JSON.stringify(this.spec);
    if (k.kind === 'lora')
      return saveLoraCheckpoint({
        config: this.config,
        settings: k.layout.settings,
        baseModel: k.base.name,
        lora: await this.model.model.getLora(),
        step: this.model.step,
        ...(optimizer && { optimizer: await this.model.getOptimizerState() }),
        extraMetadata: { stage: 'agent', spec },
      });
    const extraMetadata: Record<string, string> =
      k.kind === 'ours' ? { stage: 'agent', tokenizer: JSON.stringify(k.tok.toJSON()), spec } : { stage: 'agent', hf_base: baseToJson(k.base), spec };
    const ck = await this.model.toCheckpoint({ extraMetadata });
    return saveCheckpoint(optimizer ? ck : { ...ck, optimizer: undefined });
  }

  /**
   * Restores a checkpoint of this session's model (written by `checkpoint`): its weights (LoRA:
   * its adapter), and Adam's state when it has one and `optimizer` is true; otherwise Adam starts
   * afresh (zero moments, step 0).
   */
  restore(bytes: Uint8Array, source: string, optimizer = true): void {
    if (this.kind.kind === 'lora') {
      const ck = loadLoraCheckpoint(bytes, source);
      if (JSON.stringify(ck.settings) !== JSON.stringify(this.kind.layout.settings))
        throw new UserFacingError(`${source}: another adapter's settings than this run's`);
      this.model.model.setLora(ck.lora);
      this.model.setOptimizer(optimizer ? ck.optimizer : undefined);
      return;
    }
    const ck = loadCheckpoint(bytes, { source, config: this.config });
    if (optimizer) this.model.loadCheckpoint(ck);
    else this.model.setParams(ck.params);
  }

  /**
   * A fresh Adam for the next stage. RL starts with its own moments: the imitation stage's
   * belong to another objective, and carried over they keep moving the weights even through
   * steps whose advantages are all zero (measured: a perfect imitation policy fell from 32/32 to
   * 13/32 held-out successes in five RL steps with no reward signal at all).
   */
  freshOptimizer(): void {
    this.model.setOptimizer();
  }

  dispose(): void {
    this.gen.dispose();
    this.model.dispose();
  }
}

/** Runs imitation, then GSPO, evaluating on held-out tasks; returns the summary with the final checkpoint. */
export async function runAgentTraining(spec: AgentTrainSpec, host: AgentHost, from?: AgentStart): Promise<AgentSummary> {
  const t0 = performance.now();
  const session = await AgentSession.open(spec, host, from);
  try {
    const evals: FreshAgentEval[] = [];
    const evalNow = async (phase: string, step: number) => {
      const ev = await session.evaluate(phase, step);
      evals.push(ev);
      return ev;
    };
    const start = await evalNow(from ? 'start' : 'untrained', 0);
    // (1) Imitation.
    await session.sft(0, spec.sftSteps);
    if (spec.sftSteps > 0) await evalNow('sft', spec.sftSteps);
    if (spec.sftSteps > 0 && spec.rlSteps > 0) session.freshOptimizer();
    // (2) GSPO on episode rewards, in the world model when there is one.
    const gapPairs = { disagree: 0, n: 0 };
    for (let step = 0; step < spec.rlSteps; step++) {
      const r = await session.rlStep(step, spec.rlSteps, !!host.world);
      if (r.gap) {
        gapPairs.disagree += r.gap.disagree;
        gapPairs.n += r.gap.n;
      }
      if ((step + 1) % spec.evalEvery === 0 || step + 1 === spec.rlSteps) await evalNow('rl', step + 1);
    }
    const final = evals[evals.length - 1];
    const vsStart = pairedOneSided(final.solved, start.solved);
    return {
      domain: spec.domain,
      families: spec.families,
      config: session.config,
      tokenizer: session.codec.vocabSize,
      T: session.spec.T,
      sftSteps: spec.sftSteps,
      rlSteps: spec.rlSteps,
      evals,
      start,
      final,
      pFinalVsStart: vsStart.p,
      tasksVsStart: { gained: vsStart.gained, lost: vsStart.lost },
      ...(host.world && { simToRealGap: gapPairs.n ? gapPairs.disagree / gapPairs.n : null, simulatedEpisodes: gapPairs.n }),
      // The policy's weights, tokenizer and settings; going on from it starts Adam afresh.
      checkpoint: await session.checkpoint(),
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    session.dispose();
  }
}

/** One RL step's GSPO updates: the moves in batches of `batch` rows (the last filled with zero-advantage copies). */
async function gspoMoves(
  model: GpuTrainer,
  allMoves: { prompt: number[]; response: number[]; adv: number }[],
  spec: AgentTrainSpec,
  pad: number,
  lr: number,
): Promise<Record<string, number>> {
  const B = spec.batch;
  // Moves whose advantage is zero (a group whose episodes all scored alike) carry no gradient,
  // and an optimizer step on nothing still decays the weights: they are left out.
  const moves = allMoves.filter((m) => m.adv !== 0);
  const chunks: (typeof moves)[] = [];
  for (let i = 0; i < moves.length; i += B) {
    const c = moves.slice(i, i + B);
    while (c.length < B) c.push({ ...c[0], adv: 0 });
    chunks.push(c);
  }
  const batches = chunks.map((c) => movesBatch(c, spec.T, spec.maxNewTokens, pad));
  // π_old of every batch before any update; the first batch's step runs at those weights.
  const olds: (Float32Array | 'current')[] = ['current'];
  for (const b of batches.slice(1)) olds.push(await model.responseLogprobs(b));
  const out = { loss: 0, clip_fraction: 0, mean_ratio: 0, grad_norm: 0, updates: batches.length };
  for (let k = 0; k < batches.length; k++) {
    const s = await model.gspoStep(
      batches[k],
      olds[k],
      chunks[k].map((m) => m.adv),
      lr,
      { gradNorm: true },
    );
    out.loss += -s.objective / batches.length;
    out.clip_fraction += s.clipFraction / batches.length;
    out.mean_ratio += s.meanRatio / batches.length;
    out.grad_norm += (s.gradNorm ?? 0) / batches.length;
  }
  return out;
}

/** The learning rate schedule of a GSPO stage of `total` steps: warm-up, then cosine down to a tenth. */
export function rlSchedule(spec: Pick<AgentTrainSpec, 'rlLr' | 'rlWarmup'>, total: number): LrSchedule {
  return { maxLr: spec.rlLr, minLr: spec.rlLr / 10, warmupSteps: Math.min(spec.rlWarmup ?? 0, total), totalSteps: total };
}

/**
 * The advantages of one RL step's episodes, G per group in order: each group's rewards normalised
 * within the group. With a `shuffleKey` (the control run), the rewards are first permuted across
 * all the step's episodes in a keyed order, so an episode's advantage says nothing about it.
 */
export function stepAdvantages(rewards: readonly number[], G: number, shuffleKey: string | null): Float64Array {
  const r = shuffleKey === null ? rewards : shuffled(rewards.length, shuffleKey).map((j) => rewards[j]);
  const out = new Float64Array(r.length);
  for (let g = 0; g < r.length; g += G) out.set(episodeAdvantages(r.slice(g, g + G)), g);
  return out;
}

/** 0..n−1 in a keyed random order. */
function shuffled(n: number, key: string): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(keyedUniform(`${key}:${i}`, 0) * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
