// `lwm agent train`: an agent policy trained on tasks of one domain (src/train/agent/run.ts):
// imitation of the reference solvers, then GSPO on episode rewards, evaluated on held-out tasks
// in the real environment. Writes OUT/policy.safetensors (a LoRA policy: the adapter folder
// OUT/policy), OUT/metrics.jsonl and OUT/summary.json.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PRESETS, type PresetName } from '../../core/model/config.ts';
import { DOMAINS, type KnownDomain } from '../../core/schema/types.ts';
import type { BackendRef } from '../../core/backendRef.ts';
import { errnoText, FileError, intOption, parseCommandArgs, UsageError, writeFileAtomicSync, type CliIO, type Command } from '../io.ts';
import { envApiKey, isUserError, modelArg, openNodeRuntime } from './common.ts';
import {
  ADAPTER_CONFIG,
  checkLoraOutput,
  HF_INPUT_ERRORS,
  isFolder,
  LORA_OPTIONS,
  loraAdapterConfig,
  loraOption,
  memoryGib,
  readHfStart,
  writeLoraFolder,
} from './trainHf.ts';

const USAGE = `lwm agent train --env real|model [--world M] --domain D --families F[,F...] -o OUT
  [--world CKPT|ONNX_DIR|HF_FOLDER|URL|copy-last] [--world-model NAME]
                                --env model: the world model that answers the RL episodes' actions: a checkpoint
                                of ours (on the GPU); its ONNX export (lwm export --to onnx; onnxruntime's WASM
                                engine, on the CPU); a Hugging Face model folder or Hub id; or an OpenAI-compatible
                                endpoint's base URL, such as lwm serve's (http://127.0.0.1:8000/v1; key from
                                $LWM_API_KEY, then $OPENAI_API_KEY), its model --world-model NAME or the only one
                                it lists
  [--world-max-tokens N]        most tokens of one simulated observation (default a quarter of the world model's
                                context, as lwm infer: the rest is the room of its prompt, history included)
  [--policy PRESET|CHECKPOINT|HF_FOLDER|ADAPTER_DIR]
                                a fresh model of a preset (default bench); a policy checkpoint to go on from; a
                                Hugging Face model folder or Hub id (Llama / Qwen2 / Qwen3 with a chat template),
                                prompted in its chat format and fine-tuned whole, or through a LoRA adapter with
                                --lora R; or an adapter folder this command wrote (OUT/policy) to go on from
  [--lora R [--lora-alpha A] [--lora-targets q,k,v,o,gate,up,down] [--weights f32|f16]] [--memory-gib G]
                                LoRA on a Hugging Face policy, as lwm train --from HF_FOLDER takes it
  [--sft-steps N] [--rl-steps N] [--group G] [--tasks-per-step N] [--batch N]
  [--eval-every N] [--eval-tasks N] [--train-tasks N] [--max-turns N] [--max-new-tokens N]
  [--layout compact|full] [--tokens T] [--vocab V] [--sft-lr X] [--rl-lr X] [--rl-warmup N] [--temperature X] [--seed N] [--shuffle-reward]
                                --max-new-tokens (the action budget) and --tokens (the policy context) default to what
                                the families' longest action and goal take with a fresh policy of ours (12 and 64 on
                                terminal write_word; 42 and 96 on mcp write_file); a run they do not fit says what does.
                                --sft-steps defaults to the imitation the families need (400; 2000 on mcp write_file,
                                1000 on swe write_function)
Writes OUT/policy.safetensors (a LoRA policy: OUT/policy, an adapter folder in PEFT's layout),
OUT/metrics.jsonl (one JSON line per step and evaluation) and
OUT/summary.json (also printed): held-out success at the start (untrained, or the --policy checkpoint), after SFT and during RL.

lwm agent experiment --world M --domain D --families F[,F...] -o OUT [--arms A,...] [--resume]
  [the training settings above; --policy a preset, or a Hugging Face folder (with --lora R)]
The Sim RL experiment: from one imitation policy, agents trained by GSPO in the real environment
(real), in the world model (model), in the world model then the real environment (model-real),
and none (imitation), each evaluated on the same held-out tasks in the real environment every
--eval-every steps. Arms default to these four; shuffled, a control asked for by name, is the
real arm with each step's rewards permuted across its episodes (the table then gives each arm's
p against it). Saves OUT/experiment.json (and its policies) after
every evaluation; --resume goes on from there (a Hugging Face policy's folder, named in
experiment.json, is read again). Writes OUT/metrics.jsonl and OUT/summary.json.

lwm agent probe --world M [--world-model NAME] --domain D --families F[,F...] [--eval-tasks N] [--world-max-tokens N]
Checks a world model as a Sim RL world before any RL: on N held-out tasks (default 16), the
reference solver's episode, each near miss and no action are replayed in the world model, and its
answer to the family's probe (the simulated reward) is compared with the real check. Prints a
table by attempt on stderr and the counts as JSON on stdout.`;

const OPTIONS = {
  env: { type: 'string' },
  world: { type: 'string' },
  'world-model': { type: 'string' },
  'world-max-tokens': { type: 'string' },
  domain: { type: 'string' },
  families: { type: 'string' },
  policy: { type: 'string' },
  out: { type: 'string', short: 'o' },
  'sft-steps': { type: 'string' },
  'rl-steps': { type: 'string' },
  group: { type: 'string' },
  'tasks-per-step': { type: 'string' },
  batch: { type: 'string' },
  'eval-every': { type: 'string' },
  'eval-tasks': { type: 'string' },
  'train-tasks': { type: 'string' },
  'max-turns': { type: 'string' },
  'max-new-tokens': { type: 'string' },
  tokens: { type: 'string' },
  layout: { type: 'string' },
  vocab: { type: 'string' },
  'sft-lr': { type: 'string' },
  'rl-lr': { type: 'string' },
  'rl-warmup': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  'shuffle-reward': { type: 'boolean' },
  arms: { type: 'string' },
  resume: { type: 'boolean' },
  ...LORA_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

function floatOption(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= min || n > max)
    throw new UsageError(`--${name} must be a number above ${min} and at most ${max}, got ${JSON.stringify(v)}`);
  return n;
}

const agent: Command = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.out(`Usage: ${USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'train' && sub !== 'experiment' && sub !== 'probe')
    throw new UsageError(`unknown subcommand '${sub}'; try: lwm agent train, lwm agent experiment, lwm agent probe`);
  const { values: v } = parseCommandArgs(rest, OPTIONS, false);
  if (v.help) {
    io.out(`Usage: ${USAGE}\n`);
    return 0;
  }
  return sub === 'train' ? train(v, io) : sub === 'probe' ? probe(v, io) : experiment(v, io);
};

/** `lwm agent probe`: a world model's simulated reward against the real check, by attempt. */
async function probe(v: Values, io: CliIO): Promise<number> {
  if (!v.world || v.world === 'copy-last')
    throw new UsageError('--world M is required (the world model whose probe answers are checked: a checkpoint, a model folder, or an endpoint URL)');
  if (!v.domain || !(DOMAINS as readonly string[]).includes(v.domain)) throw new UsageError(`--domain must be one of ${DOMAINS.join(', ')}`);
  if (!v.families) throw new UsageError('--families is required (task families with a probe, comma-separated)');
  const families = v.families.split(',').map((f) => f.trim());
  const { listTasks } = await import('../../envs/tasks/index.ts');
  const { probedFamilies, probeAgreement } = await import('../../train/agent/simWorld.ts');
  const probed = probedFamilies();
  for (const f of families)
    if (!probed.includes(`${v.domain}/${f}`)) throw new UsageError(`--families: '${v.domain}/${f}' has no probe; families with one: ${probed.join(', ')}`);
  const n = v['eval-tasks'] === undefined ? 16 : intOption('eval-tasks', v['eval-tasks'], 1);
  const maxTokens = v['world-max-tokens'] === undefined ? undefined : intOption('world-max-tokens', v['world-max-tokens'], 1);
  const tasks = listTasks({ split: 'heldout', count: n, domains: [v.domain as KnownDomain], families });
  const world = await openWorld(io, v.world, maxTokens, v['world-model'], 'lwm agent probe');
  if (!world) return 1;
  try {
    const rows = await probeAgreement(tasks, world.backend, world.generate);
    io.err(`${v.world}: its probe answers against the real check, ${tasks.length} held-out tasks of ${families.join(', ')}\n`);
    io.err('| attempt | episodes | agree | real successes | simulated successes |\n|---|---|---|---|---|\n');
    for (const r of rows) io.err(`| ${r.attempt} | ${r.episodes} | ${r.agree} | ${r.realSuccesses} | ${r.simSuccesses} |\n`);
    for (const r of rows)
      if (r.example)
        io.err(`${r.attempt}, ${r.example.task}: ${JSON.stringify(r.example.actions)} → the world model: ${JSON.stringify(r.example.observation)}\n`);
    io.out(JSON.stringify({ world: v.world, domain: v.domain, families, tasks: tasks.length, attempts: rows }) + '\n');
    return 0;
  } catch (e) {
    if (!isWorldError(e)) throw e;
    io.err(`lwm agent probe: ${worldErrorText(e, v.world)}\n`);
    return 1;
  } finally {
    world.dispose();
  }
}

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];

/** The training settings that `args` (lwm agent train's, without the subcommand) give: for tests of the defaults. */
export async function agentTrainSpec(args: string[], io: CliIO) {
  return (await trainSpec(parseCommandArgs(args, OPTIONS, false).values, io)).spec;
}

/** The training settings shared by train and experiment, checked before any GPU work. */
async function trainSpec(v: Values, io: CliIO) {
  if (!v.domain) throw new UsageError('--domain is required (the domain whose tasks the policy learns)');
  if (!(DOMAINS as readonly string[]).includes(v.domain)) throw new UsageError(`--domain must be one of ${DOMAINS.join(', ')}, got '${v.domain}'`);
  if (!v.families) throw new UsageError('--families is required (task families of the domain, comma-separated)');
  const families = v.families.split(',').map((f) => f.trim());
  if (families.some((f) => !f)) throw new UsageError(`--families has an empty name: '${v.families}'`);
  if (!v.out) throw new UsageError('-o OUT is required (the folder the policy, metrics and summary go to)');
  const { AGENT_DEFAULTS } = await import('../../train/agent/run.ts');
  const { familyBudgets } = await import('../../train/agent/budgets.ts');
  const { taskFamilies, POLICY_LAYOUTS } = await import('../../envs/tasks/index.ts');
  let known: string[];
  try {
    known = taskFamilies(v.domain);
  } catch (e) {
    throw new UsageError(`--domain: ${(e as Error).message}`);
  }
  for (const f of families) if (!known.includes(f)) throw new UsageError(`--families: no task family '${f}' in ${v.domain}; families: ${known.join(', ')}`);
  const layout = v.layout ?? AGENT_DEFAULTS.layout;
  if (!(POLICY_LAYOUTS as readonly string[]).includes(layout)) throw new UsageError(`--layout must be one of ${POLICY_LAYOUTS.join(', ')}, got '${layout}'`);
  // The families' measured need (src/train/agent/budgets.ts), so that a run on mcp's JSON-RPC calls fits without flags.
  const budgets = familyBudgets(v.domain, families);
  const int = (name: keyof typeof OPTIONS, min: number, dflt: number) => (v[name] === undefined ? dflt : intOption(name, v[name] as string, min));
  const policy = v.policy ?? AGENT_DEFAULTS.preset;
  const preset = Object.hasOwn(PRESETS, policy) ? (policy as PresetName) : AGENT_DEFAULTS.preset;
  let from: Uint8Array | undefined;
  // A Hugging Face folder (or a Hub id, downloaded into the cache): read once the GPU runtime gives its memory.
  let folder: string | undefined;
  const { lora } = loraOption(v);
  if (!Object.hasOwn(PRESETS, policy)) {
    const path = await modelArg(io, policy);
    if (isFolder(path)) folder = path;
    else
      try {
        from = new Uint8Array(readFileSync(path));
      } catch (e) {
        throw new FileError(
          `--policy ${policy}: neither a preset (${Object.keys(PRESETS).join(', ')}), a readable checkpoint nor a model folder (${errnoText(e)})`,
        );
      }
  }
  if (lora && !folder) throw new UsageError('--lora needs --policy HF_FOLDER (a Hugging Face model folder)');
  if (lora && folder && statSync(join(folder, ADAPTER_CONFIG), { throwIfNoEntry: false }))
    throw new UsageError(`--lora: ${folder} is an adapter folder, which goes on with its own settings; leave --lora out`);
  if (v['memory-gib'] !== undefined && !folder) throw new UsageError('--memory-gib goes with --policy HF_FOLDER');
  const spec = {
    ...AGENT_DEFAULTS,
    domain: v.domain as KnownDomain,
    families,
    preset,
    sftSteps: int('sft-steps', 0, budgets.sftSteps),
    rlSteps: int('rl-steps', 0, AGENT_DEFAULTS.rlSteps),
    group: int('group', 2, AGENT_DEFAULTS.group),
    tasksPerStep: int('tasks-per-step', 1, AGENT_DEFAULTS.tasksPerStep),
    batch: int('batch', 1, AGENT_DEFAULTS.batch),
    evalEvery: int('eval-every', 1, AGENT_DEFAULTS.evalEvery),
    evalTasks: int('eval-tasks', 1, AGENT_DEFAULTS.evalTasks),
    trainTasks: int('train-tasks', 1, AGENT_DEFAULTS.trainTasks),
    maxTurns: int('max-turns', 1, AGENT_DEFAULTS.maxTurns),
    maxNewTokens: int('max-new-tokens', 2, budgets.maxNewTokens),
    T: int('tokens', 16, budgets.T),
    layout: layout as (typeof POLICY_LAYOUTS)[number],
    vocabSize: int('vocab', 300, AGENT_DEFAULTS.vocabSize),
    seed: int('seed', 0, AGENT_DEFAULTS.seed),
    sftLr: v['sft-lr'] === undefined ? AGENT_DEFAULTS.sftLr : floatOption('sft-lr', v['sft-lr'], 0, 1),
    rlLr: v['rl-lr'] === undefined ? AGENT_DEFAULTS.rlLr : floatOption('rl-lr', v['rl-lr'], 0, 1),
    rlWarmup: int('rl-warmup', 0, AGENT_DEFAULTS.rlWarmup ?? 0),
    temperature: v.temperature === undefined ? AGENT_DEFAULTS.temperature : floatOption('temperature', v.temperature, 0, 10),
    shuffleReward: !!v['shuffle-reward'],
  };
  return {
    spec,
    from,
    hf: folder ? { folder, ...(lora && { lora }), memoryGib: memoryGib(v['memory-gib']) } : undefined,
    out: v.out,
    worldMaxTokens: v['world-max-tokens'] === undefined ? undefined : int('world-max-tokens', 1, 1),
  };
}

/** The output folder, made if missing. */
function outFolder(out: string): void {
  try {
    if (statSync(out, { throwIfNoEntry: false })?.isFile()) throw new FileError(`${out}: is a file; -o names the folder the run writes to`);
    mkdirSync(out, { recursive: true });
  } catch (e) {
    if (e instanceof FileError) throw e;
    throw new FileError(`${out}: cannot create the folder (${errnoText(e)})`);
  }
}

/** A metrics sink: one JSON line per step or evaluation in `path`, and a short line on stderr. */
function metricsSink(io: CliIO, path: string, t0: number) {
  return (phase: string, step: number, values: Record<string, number>) => {
    const line = { phase, step, time_s: (Date.now() - t0) / 1000, ...values };
    try {
      appendFileSync(path, JSON.stringify(line) + '\n');
    } catch (e) {
      throw new FileError(`${path}: cannot write (${errnoText(e)})`);
    }
    const shown = Object.entries(values)
      .map(([k, x]) => `${k} ${Number.isInteger(x) ? x : x.toPrecision(4)}`)
      .join('  ');
    io.err(`[${phase} ${step}] ${shown}\n`);
  };
}

async function train(v: Values, io: CliIO): Promise<number> {
  const env = v.env ?? 'real';
  if (env !== 'real' && env !== 'model') throw new UsageError(`--env must be real or model, got '${env}'`);
  if (env === 'real' && v.world !== undefined) throw new UsageError('--world goes with --env model');
  if (v['world-model'] !== undefined && v.world === undefined) throw new UsageError('--world-model goes with an endpoint --world URL (the model it serves)');
  if (env === 'model' && v.world === undefined)
    throw new UsageError('--env model needs --world M (a world-model checkpoint of ours, its ONNX export, a model folder, an endpoint URL, or copy-last)');
  if (v.arms !== undefined || v.resume) throw new UsageError('--arms and --resume go with lwm agent experiment');
  const { spec, from, hf, out, worldMaxTokens } = await trainSpec(v, io);
  const { runAgentTraining } = await import('../../train/agent/run.ts');
  outFolder(out);
  const loraPolicy = !!hf && (!!hf.lora || !!statSync(join(hf.folder, ADAPTER_CONFIG), { throwIfNoEntry: false }));
  if (loraPolicy) checkLoraOutput(join(out, 'policy'));
  const metricsPath = join(out, 'metrics.jsonl');
  writeFileAtomicSync(metricsPath, '');
  const world = env === 'model' ? await openWorld(io, v.world!, worldMaxTokens, v['world-model']) : null;
  if (world === null && env === 'model') return 1;
  const rt = await openNodeRuntime(io, 'lwm agent train: ');
  if (!rt) {
    world?.dispose();
    return 1;
  }
  io.err(`adapter: ${rt.describe()}\n`);
  const t0 = Date.now();
  const { UserFacingError } = await import('../../train/context.ts');
  try {
    const start = hf ? await hfPolicy(io, rt, hf, spec) : from;
    const summary = await runAgentTraining(
      spec,
      {
        rt,
        ...(world && { world: { backend: world.backend, options: world.generate } }),
        log: (m) => io.err(`${m}\n`),
        metric: metricsSink(io, metricsPath, t0),
      },
      start,
    );
    // A LoRA policy is its adapter folder (PEFT's layout; --policy OUT/policy goes on from it).
    const adapterConfig = loraAdapterConfig(summary.checkpoint);
    const checkpoint = join(out, adapterConfig === null ? 'policy.safetensors' : 'policy');
    if (adapterConfig === null) writeFileAtomicSync(checkpoint, summary.checkpoint);
    else writeLoraFolder(checkpoint, summary.checkpoint, adapterConfig);
    const { checkpoint: _, ...rest } = summary;
    const worldModel = world?.ref.kind === 'endpoint' ? world.ref.endpoint.model : undefined;
    const json = JSON.stringify({
      env,
      ...(env === 'model' && { world: v.world }),
      ...(worldModel && { worldModel }),
      checkpoint,
      metrics: metricsPath,
      ...rest,
    });
    writeFileAtomicSync(join(out, 'summary.json'), json + '\n');
    io.out(json + '\n');
    return 0;
  } catch (e) {
    if (isUserError(e, [UserFacingError]) || HF_INPUT_ERRORS.includes((e as Error).name) || isWorldError(e)) {
      io.err(`lwm agent train: ${isWorldError(e) ? worldErrorText(e, v.world) : (e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    world?.dispose();
    rt.dispose();
  }
}

type HfPolicyArgs = { folder: string; lora?: NonNullable<ReturnType<typeof loraOption>['lora']>; memoryGib: number };

/**
 * A Hugging Face policy's folder read for the run (its memory checked first, as the app's Sim RL
 * panel checks it: the larger of the trainer's rows and the rollouts' batch, with their KV cache):
 * a model folder, or an adapter folder with its base.
 */
async function hfPolicy(
  io: CliIO,
  rt: import('../../gpu/runtime.ts').GpuRuntime,
  hf: HfPolicyArgs,
  spec: { T: number; batch: number },
): Promise<import('../../train/agent/run.ts').AgentHfStart> {
  const { POLICY_BATCH } = await import('../../train/agent/run.ts');
  const read = await readHfStart(io, hf.folder, {
    rt,
    lora: hf.lora?.rank,
    T: spec.T,
    batch: Math.max(spec.batch, POLICY_BATCH),
    generates: true,
    memoryGib: hf.memoryGib,
    baseWeights: hf.lora?.baseWeights,
  });
  return { hfBase: read.hfBase, ...(hf.lora && { lora: hf.lora }), ...(read.from && { adapter: read.from }) };
}

/** The experiment state on disk: experiment.json with its policies as safetensors files beside it. */
const STATE_FILES = { imitation: 'imitation.safetensors', modelFinal: 'model-final.safetensors' } as const;

/**
 * Writes the state: the policies first, then the JSON that names them, so a cut write leaves the
 * previous JSON, whose files are still whole. The imitation and the model arm's final policy
 * never change once set: `written` holds the names already written by this process, which are
 * not written again at every save.
 */
export function writeState(out: string, s: import('../../train/agent/experiment.ts').AgentExperimentState, written = new Set<string>()): void {
  const once = (name: string, bytes: Uint8Array | null): string | null => {
    if (!bytes) return null;
    if (!written.has(name)) writeFileAtomicSync(join(out, name), bytes);
    written.add(name);
    return name;
  };
  const cursor = s.cursor ? `cursor-${s.cursor.arm}-${s.cursor.step}.safetensors` : null;
  if (s.cursor && cursor) writeFileAtomicSync(join(out, cursor), s.cursor.checkpoint);
  const json = {
    ...s,
    imitation: once(STATE_FILES.imitation, s.imitation),
    modelFinal: once(STATE_FILES.modelFinal, s.modelFinal),
    cursor: s.cursor && { ...s.cursor, checkpoint: cursor },
  };
  writeFileAtomicSync(join(out, 'experiment.json'), JSON.stringify(json, null, 1) + '\n');
  // Earlier cursors are no longer named by the JSON.
  for (const f of readdirSync(out)) if (/^cursor-.*\.safetensors$/.test(f) && f !== cursor) rmSync(join(out, f), { force: true });
}

export function readState(out: string): import('../../train/agent/experiment.ts').AgentExperimentState {
  const path = join(out, 'experiment.json');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new FileError(`${path}: cannot read the experiment to resume (${e instanceof SyntaxError ? e.message : errnoText(e)})`);
  }
  if (typeof json !== 'object' || json === null || json.version !== 1 || !Array.isArray(json.arms) || typeof json.spec !== 'object')
    throw new FileError(`${path}: not an experiment saved by lwm agent experiment`);
  const bytes = (name: unknown): Uint8Array | null => {
    if (name === null || name === undefined) return null;
    if (typeof name !== 'string' || name.includes('/') || name.includes('\\') || !name.endsWith('.safetensors'))
      throw new FileError(`${path}: names a policy file ${JSON.stringify(name)} outside its folder`);
    try {
      return new Uint8Array(readFileSync(join(out, name)));
    } catch (e) {
      throw new FileError(`${join(out, name)}: cannot read (${errnoText(e)})`);
    }
  };
  const cursor = json.cursor as { arm: number; step: number; checkpoint: unknown } | null;
  return {
    ...(json as unknown as import('../../train/agent/experiment.ts').AgentExperimentState),
    imitation: bytes(json.imitation),
    modelFinal: bytes(json.modelFinal),
    cursor: cursor && { ...cursor, checkpoint: bytes(cursor.checkpoint)! },
  };
}

async function experiment(v: Values, io: CliIO): Promise<number> {
  if (v.env !== undefined) throw new UsageError('--env goes with lwm agent train; an experiment runs the arms --arms names');
  const { AGENT_ARMS, DEFAULT_ARMS, newAgentExperiment, needsWorld, runAgentExperiment, experimentResults, ARM_LABELS } = await import(
    '../../train/agent/experiment.ts'
  );
  const arms = (v.arms ?? DEFAULT_ARMS.join(',')).split(',').map((a) => a.trim());
  for (const a of arms) if (!(AGENT_ARMS as readonly string[]).includes(a)) throw new UsageError(`--arms: unknown arm '${a}'; arms: ${AGENT_ARMS.join(', ')}`);
  if (needsWorld(arms as never) && v.world === undefined)
    throw new UsageError(
      '--world M is required for the model arms (a world-model checkpoint of ours, its ONNX export, a model folder, an endpoint URL, or copy-last)',
    );
  const { spec, from, hf, out, worldMaxTokens } = await trainSpec(v, io);
  if (from)
    throw new UsageError(
      'an experiment trains its policy from a preset (--policy micro|bench|…) or a Hugging Face folder; a policy checkpoint goes with lwm agent train',
    );
  const { UserFacingError } = await import('../../train/context.ts');
  let state;
  try {
    state = v.resume
      ? readState(out)
      : newAgentExperiment({
          train: spec,
          arms: arms as never,
          ...(v.world !== undefined && { world: v.world }),
          ...(v['world-model'] !== undefined && { worldModel: v['world-model'] }),
          ...(hf && { policy: { folder: hf.folder, ...(hf.lora && { lora: hf.lora }) } }),
        });
  } catch (e) {
    if (e instanceof UserFacingError) throw new UsageError(e.message);
    throw e;
  }
  if (!v.resume) {
    outFolder(out);
    if (statSync(join(out, 'experiment.json'), { throwIfNoEntry: false }))
      throw new FileError(`${join(out, 'experiment.json')}: an experiment is already there; go on with --resume, or name another folder`);
  }
  const metricsPath = join(out, 'metrics.jsonl');
  if (!v.resume) writeFileAtomicSync(metricsPath, '');
  const worldName = state.spec.world;
  const named = v['world-model'];
  if (v.resume && named !== undefined && state.spec.worldModel !== undefined && named !== state.spec.worldModel)
    throw new UsageError(`--world-model ${named}: this experiment's world model is ${state.spec.worldModel}; a resumed experiment keeps its world`);
  const world =
    needsWorld(state.spec.arms) && worldName ? await openWorld(io, worldName, worldMaxTokens, state.spec.worldModel ?? named, 'lwm agent experiment') : null;
  // An endpoint's model, named or the one it listed, is kept with the experiment: a resume asks that one again.
  if (world?.ref.kind === 'endpoint') state.spec.worldModel = world.ref.endpoint.model;
  if (world === null && needsWorld(state.spec.arms)) return 1;
  const rt = await openNodeRuntime(io, 'lwm agent experiment: ');
  if (!rt) {
    world?.dispose();
    return 1;
  }
  io.err(`adapter: ${rt.describe()}\n`);
  const t0 = Date.now();
  const written = new Set<string>();
  try {
    // A Hugging Face policy: its folder (named in the stored experiment when going on) read again.
    const policy = state.spec.policy;
    const start = policy ? await hfPolicy(io, rt, { ...policy, memoryGib: hf?.memoryGib ?? memoryGib(undefined) }, state.spec.train) : undefined;
    const final = await runAgentExperiment(
      state,
      {
        rt,
        ...(world && { world: { backend: world.backend, options: world.generate } }),
        log: (m) => io.err(`${m}\n`),
        metric: metricsSink(io, metricsPath, t0),
        save: async (s) => writeState(out, s, written),
      },
      start,
    );
    const results = experimentResults(final);
    const fmt = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? '—' : x.toFixed(d));
    // With the shuffled-reward control: p that each RL arm beats it, greedy / sampled.
    const control = final.spec.arms.includes('shuffled');
    io.err(`\narm          success   sampled   p vs untrained  p vs imitation  ${control ? 'p vs shuffled   ' : ''}sim-to-real gap\n`);
    for (const r of results) {
      const sampled = r.final?.sampledSuccesses === undefined ? '—' : `${r.final.sampledSuccesses}/${r.final.n}`;
      const vsControl = control ? `${(r.pVsShuffled === null ? '—' : `${fmt(r.pVsShuffled)}/${fmt(r.pSampledVsShuffled)}`).padEnd(15)} ` : '';
      io.err(
        `${r.arm.padEnd(12)} ${`${r.final?.successes ?? 0}/${r.final?.n ?? 0}`.padEnd(9)} ${sampled.padEnd(9)} ${fmt(r.pVsUntrained).padEnd(15)} ${fmt(r.pVsImitation).padEnd(15)} ${vsControl}${fmt(r.simToRealGap)}   ${ARM_LABELS[r.arm]}\n`,
      );
    }
    const json = JSON.stringify({
      world: worldName ?? null,
      untrained: final.untrained,
      imitation: final.imitationEval,
      arms: results,
      curves: Object.fromEntries(
        final.arms.map((a) => [a.arm, a.evals.map((e) => ({ step: e.step, success: e.success, sampledSuccesses: e.sampledSuccesses ?? null }))]),
      ),
      experiment: join(out, 'experiment.json'),
      metrics: metricsPath,
      seconds: (Date.now() - t0) / 1000,
    });
    writeFileAtomicSync(join(out, 'summary.json'), json + '\n');
    io.out(json + '\n');
    return 0;
  } catch (e) {
    if (isUserError(e, [UserFacingError]) || HF_INPUT_ERRORS.includes((e as Error).name) || isWorldError(e)) {
      io.err(`lwm agent experiment: ${isWorldError(e) ? worldErrorText(e, worldName) : (e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    world?.dispose();
    rt.dispose();
  }
}

/** An endpoint world's failure (refused key, server gone, bad reply), met when opening it or mid-run. */
function isWorldError(e: unknown): boolean {
  return (e as Error)?.name === 'EndpointError';
}

/** An error of the world model, said with the --world it came from; an endpoint's refused key names where the key is read. */
function worldErrorText(e: unknown, world: string | undefined): string {
  const err = e as Error & { kind?: string };
  const where = isWorldError(e) && err.kind === 'auth' ? ' (lwm agent sends $LWM_API_KEY, else $OPENAI_API_KEY)' : '';
  return `--world ${world}: ${err.message}${where}`;
}

/**
 * What --world names: copy-last; an OpenAI-compatible endpoint's base URL (`http://…/v1`, e.g.
 * what `lwm serve` prints), its model the one `model` names or else the only one it lists; or, as
 * `lwm serve --model` takes it, a checkpoint of ours (on the GPU), an ONNX folder (onnxruntime's
 * WASM engine, as `lwm infer --backend onnx`), a Hugging Face model folder, or a Hub id of one.
 */
export async function worldRef(world: string, o: { model?: string; log?: (line: string) => void } = {}): Promise<BackendRef> {
  if (/^https?:\/\//i.test(world)) {
    let url: URL;
    try {
      url = new URL(world);
    } catch {
      throw new UsageError(`--world ${JSON.stringify(world)} is not a URL (an endpoint's base URL, e.g. http://127.0.0.1:8000/v1)`);
    }
    if (url.username || url.password) throw new UsageError('--world must not hold a user name or password; pass the key in $LWM_API_KEY');
    const { EndpointClient } = await import('../../backends/endpoint.ts');
    let model = o.model;
    if (model === undefined) {
      const listed = await new EndpointClient({ baseUrl: world, model: '', apiKey: envApiKey(), timeoutMs: 30_000, retries: 1 }).models();
      if (listed.length !== 1)
        throw new UsageError(
          `--world ${world} serves ${listed.length === 0 ? 'no model' : `${listed.length} models (${listed.join(', ')})`}; name the world model with --world-model NAME`,
        );
      model = listed[0];
    }
    const { ENDPOINT_WORLD_CONCURRENCY } = await import('../../train/agent/simWorld.ts');
    // Whole replies: the answers are short and greedy.
    return { kind: 'endpoint', endpoint: { baseUrl: world, model, stream: false, concurrency: ENDPOINT_WORLD_CONCURRENCY } };
  }
  if (o.model !== undefined) throw new UsageError('--world-model goes with an endpoint --world URL (the model it serves)');
  const { refFromModel } = await import('../../backends/node.ts');
  return refFromModel(world, {}, o.log);
}

/**
 * The world model named by --world (worldRef), opened as `lwm infer` opens a backend (greedy
 * answers); null (with the reason on `io.err`) when it cannot be. The `agent` benchmark opens its
 * world here too.
 */
export async function openWorld(io: Pick<CliIO, 'err'>, world: string, maxTokens?: number, model?: string, command = 'lwm agent train') {
  const { nodeSource } = await import('../../backends/node.ts');
  const { openReady } = await import('../../backends/open.ts');
  const { defaultAnswerTokens } = await import('../../core/backend.ts');
  const source = nodeSource();
  try {
    const ref = await worldRef(world, { ...(model !== undefined && { model }), log: (line) => io.err(line) });
    const opened = await openReady(ref, source, { maxTokens: maxTokens ?? 1, temperature: 0 }, { name: `world:${world}` });
    // By default a quarter of its context, as `lwm infer` and the recipe's evaluation answer: a
    // longer budget leaves the prompt less room, and the fit drops the history first. An endpoint
    // does not say its context: 64 tokens.
    const context = opened.contextLength ?? 0;
    const generate = { ...opened.generate, maxTokens: maxTokens ?? (context > 0 ? defaultAnswerTokens(context) : 64) };
    return {
      ...opened,
      generate,
      dispose: () => {
        opened.dispose();
        source.release();
      },
    };
  } catch (e) {
    source.release();
    if (e instanceof UsageError) throw e;
    io.err(`${command}: ${worldErrorText(e, world)}\n`);
    return null;
  }
}

export default agent;
