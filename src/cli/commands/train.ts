// `lwm train`: the training pipeline (src/train/pipeline.ts) in Node, on WebGPU through Dawn —
// the same job code the app's worker runs.
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { checkpointFiles, joinCheckpointFiles, optimizerFileName } from '../../core/model/checkpoint.ts';
import {
  checkOutputPath,
  errnoText,
  FileError,
  inputFileProblem,
  intOption,
  parseCommandArgs,
  UsageError,
  writeFileAtomicSync,
  type CliIO,
  type Command,
} from '../io.ts';
import { PRESETS, type PresetName } from '../../core/model/config.ts';
import { MIN_VOCAB } from '../../core/tokenizer/index.ts';
import type { Trajectory } from '../../core/schema/types.ts';
import { LR_MIN_FRACTION, MIN_SEQUENCE_TOKENS } from '../../core/trainSpec.ts';
import type { SftLabel } from '../../train/rejection.ts';
import type { TrainResult } from '../../train/pipeline.ts';
import { readMaskConfigFile } from './mask.ts';
import { envApiKey, isUserError, loadTrainingData, modelArg, openNodeRuntime, readWhole } from './common.ts';
import { checkLoraOutput, HF_INPUT_ERRORS, isFolder, LORA_OPTIONS, loraAdapterConfig, loraOption, memoryGib, readHfStart, writeLoraFolder } from './trainHf.ts';

const USAGE = `lwm train --recipe quick --domain D [--tasks F[,F…]|probed] [-o CKPT] [--metrics FILE]
                                                   (a whole recipe: fresh data, model, tokenizer, template, stages,
                                                    steps and schedule; docs/fidelity.md; --tasks adds task-play
                                                    trajectories of those task families, as many as the
                                                    recipe's own: what a Sim RL world model needs, method.md §13)
lwm train --stage cpt|sft|rl --preset ${Object.keys(PRESETS).join('|')} [--data FILE | --domain D] [--steps N] [--from CKPT] [-o CKPT] [--metrics FILE]
  [--batch B] [--tokens T] [--seed S] [--eval-every N] [--lr PEAK] [--vocab V] [--mask-config CFG]
  [--reward rubric|reference-ab|turing]            (RL: the reward; default rubric = 0.9 judge + 0.1 verifier)
  [--reward-judge local|endpoint --judge-base-url U --judge-model M --judge-api-key K]
  [--eval-samples N]                               (RL: held-out turns judged at each evaluation; default 8)
  [--labels LABELS.jsonl]                          (SFT: train on chosen labels, e.g. from lwm labels)
  [--rows turn|trajectory]                         (SFT: one turn sample a row (default), or trajectory rows that also
                                                    train every history observation a row shows; docs/method.md §5)
  [--answer-room N]                                (SFT: lay rows out as a generator leaving N tokens for its answer is
                                                    prompted, e.g. a quarter of --tokens, as lwm infer leaves; §5)
  [--group G] [--prompts P] [--max-new N]          (RL: samples per prompt, prompts per step, response length)
  [--temperature T]                                (RL: rollout sampling temperature, > 0, default 1; GSPO's
                                                    log-probs are those of the same tempered distribution)
  [--from HF_FOLDER [--lora R [--lora-alpha A] [--lora-targets q,k,v,o,gate,up,down] [--weights f32|f16]] [--memory-gib G]]
                                                   (fine-tune a Hugging Face Llama / Qwen2 / Qwen3 folder, or a Hub
                                                    id org/name[@revision] downloaded into the Hugging Face cache, in its
                                                    chat format: full, or a LoRA adapter (alpha default 2R) written
                                                    as a PEFT folder -o DIR; --from DIR resumes it; --weights f16
                                                    holds the frozen base in f16: half its memory, f32 accumulation)
-o X.safetensors: the weights (loads in Hugging Face tools) there, the optimizer state in X.optim.safetensors,
which --from X.safetensors picks up to resume a run of the same stage.`;

/** Checkpoints go through writeFileAtomicSync: a crash mid-write leaves the previous file whole. */
const writeAtomic = writeFileAtomicSync;

/** A checkpoint as two files: PATH (weights, loads in Hugging Face tools) and PATH's .optim.safetensors. */
function writeCheckpoint(path: string, bytes: Uint8Array) {
  const adapter = loraAdapterConfig(bytes);
  if (adapter !== null) return writeLoraFolder(path, bytes, adapter);
  const files = checkpointFiles(bytes, path);
  if (files.optimizer) writeAtomic(optimizerFileName(path), files.optimizer);
  else rmSync(optimizerFileName(path), { force: true });
  writeAtomic(path, files.weights);
}

const int = (name: string, v: string | undefined, min = 1): number | undefined => (v === undefined ? undefined : intOption(name, v, min));

const OPTIONS = {
  stage: { type: 'string' },
  preset: { type: 'string' },
  data: { type: 'string' },
  domain: { type: 'string', multiple: true },
  steps: { type: 'string' },
  recipe: { type: 'string' },
  tasks: { type: 'string' },
  from: { type: 'string' },
  out: { type: 'string', short: 'o' },
  metrics: { type: 'string' },
  batch: { type: 'string' },
  tokens: { type: 'string' },
  seed: { type: 'string' },
  'eval-every': { type: 'string' },
  lr: { type: 'string' },
  vocab: { type: 'string' },
  group: { type: 'string' },
  prompts: { type: 'string' },
  'max-new': { type: 'string' },
  temperature: { type: 'string' },
  'mask-config': { type: 'string' },
  rows: { type: 'string' },
  'answer-room': { type: 'string' },
  labels: { type: 'string' },
  reward: { type: 'string' },
  'reward-judge': { type: 'string' },
  'judge-base-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-api-key': { type: 'string' },
  'eval-samples': { type: 'string' },
  ...LORA_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

type TrainValues = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>['values'];
type Stage = 'cpt' | 'sft' | 'rl';
type Reward = 'rubric' | 'reference-ab' | 'turing';

/** The run's settings from the flags, every one checked before data is read or the GPU starts; null when the mask file is unusable (said). */
function trainSpec(values: TrainValues, io: CliIO) {
  const stage = values.stage;
  if (stage !== 'cpt' && stage !== 'sft' && stage !== 'rl') throw new UsageError(`--stage must be cpt, sft or rl\nusage: ${USAGE}`);
  const preset = values.preset ?? 'micro';
  if (!Object.hasOwn(PRESETS, preset)) throw new UsageError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}; got '${preset}'`);
  const temperature = values.temperature === undefined ? undefined : Number(values.temperature);
  if (temperature !== undefined && !(temperature > 0 && Number.isFinite(temperature)))
    throw new UsageError(`--temperature must be a number above 0, got '${values.temperature}'`);
  const lr = values.lr === undefined ? undefined : Number(values.lr);
  if (lr !== undefined && !(lr > 0 && lr < 1)) throw new UsageError(`--lr must be a number in (0, 1), got '${values.lr}'`);
  // The loss mask's thresholds and ratios (the file `lwm mask --write-config` writes).
  const mask = values['mask-config'] ? readMaskConfigFile(values['mask-config'], io) : undefined;
  if (mask === null) return null;
  const reward = values.reward ?? 'rubric';
  if (reward !== 'rubric' && reward !== 'reference-ab' && reward !== 'turing')
    throw new UsageError(`--reward must be rubric, reference-ab or turing; got '${reward}'`);
  const rewardJudge = values['reward-judge'] ?? 'local';
  if (rewardJudge !== 'local' && rewardJudge !== 'endpoint') throw new UsageError(`--reward-judge must be local or endpoint; got '${rewardJudge}'`);
  if (rewardJudge === 'endpoint' && (!values['judge-base-url'] || !values['judge-model']))
    throw new UsageError('--reward-judge endpoint needs --judge-base-url and --judge-model');
  const rows = values.rows;
  if (rows !== undefined && rows !== 'turn' && rows !== 'trajectory') throw new UsageError(`--rows must be turn or trajectory; got '${rows}'`);
  if (rows !== undefined && stage !== 'sft') throw new UsageError('--rows is for --stage sft');
  if (values['answer-room'] !== undefined && stage !== 'sft') throw new UsageError('--answer-room is for --stage sft');
  const answerRoom = int('answer-room', values['answer-room'], 1);
  const rlOnly = ['reward', 'reward-judge', 'judge-base-url', 'judge-model', 'eval-samples'].filter((k) => values[k as keyof typeof values] !== undefined);
  if (stage !== 'rl' && rlOnly.length) throw new UsageError(`--${rlOnly[0]} is for --stage rl`);
  const spec = {
    kind: 'train' as const,
    stage: stage as Stage,
    preset: preset as PresetName,
    steps: int('steps', values.steps ?? '100')!,
    batch: int('batch', values.batch),
    T: int('tokens', values.tokens, MIN_SEQUENCE_TOKENS),
    seed: int('seed', values.seed, 0),
    evalEvery: int('eval-every', values['eval-every']),
    vocabSize: int('vocab', values.vocab, MIN_VOCAB),
    domains: values.domain,
    ...(lr !== undefined && { lr: { peak: lr, min: lr * LR_MIN_FRACTION } }),
    rl: {
      groupSize: int('group', values.group, 2),
      promptsPerStep: int('prompts', values.prompts),
      maxNewTokens: int('max-new', values['max-new']),
      temperature,
      evalSamples: int('eval-samples', values['eval-samples']),
      reward: reward as Reward,
      rewardJudge: rewardJudge as 'local' | 'endpoint',
      // The key stays out of the spec: the spec is stored in every checkpoint.
      ...(rewardJudge === 'endpoint' ? { judgeEndpoint: { baseUrl: values['judge-base-url']!, model: values['judge-model']! } } : {}),
    },
    ...(mask && { mask }),
    ...(rows && { rows: rows as 'turn' | 'trajectory' }),
    ...(answerRoom !== undefined && { answerRoom }),
    ...loraOption(values),
  };
  spec.rl = Object.fromEntries(Object.entries(spec.rl).filter(([, v]) => v !== undefined)) as typeof spec.rl;
  return spec;
}

/** --labels FILE for SFT, every problem reported before the GPU starts; null when it cannot be used (said on stderr). */
async function readSftLabels(io: CliIO, path: string, stage: Stage, trajectories: Trajectory[]): Promise<SftLabel[] | null> {
  if (stage !== 'sft') throw new UsageError(`--labels is for --stage sft (the labels replace the reference observations); got --stage ${stage}`);
  const { readLabelFile } = await import('../../train/labels.ts');
  const text = readWhole(io, path, 'utf8');
  if (text === null) return null;
  const r = readLabelFile(text, path, trajectories);
  if (r.errors.length) {
    io.err(r.errors.join('\n') + '\n');
    return null;
  }
  if (r.labels.length === 0) {
    io.err(`${path}: no labels to train on\n`);
    return null;
  }
  io.err(`${path}: ${r.labels.length} labels\n`);
  return r.labels;
}

/** --from CKPT: the weights and, when the optimizer state is beside them, both (a run of the same stage resumes); null on a problem (said). */
function readStartCheckpoint(io: CliIO, path: string): Uint8Array | null {
  const problem = inputFileProblem(path);
  if (problem) {
    io.err(problem + '\n');
    return null;
  }
  const weights = readWhole(io, path);
  if (weights === null) return null;
  const optPath = optimizerFileName(path);
  if (!existsSync(optPath)) return weights;
  try {
    return joinCheckpointFiles({ weights, optimizer: new Uint8Array(readFileSync(optPath)) }, path);
  } catch (e) {
    io.err(`${(e as Error).message}\n`);
    return null;
  }
}

type TrainCommandSpec = NonNullable<ReturnType<typeof trainSpec>>;

/** Metric lines that are too fine-grained for the terminal (they still go to --metrics); per-domain figures (`eval_loss/web`) get their own log line. */
const QUIET_METRIC = /^(judge_|eval_judge_|share_)|\//;
/** Values this large print as whole numbers (tokens per second, counts); smaller ones to four digits. */
const WHOLE_NUMBER_FROM = 100;

/** Each metric event: a JSON line in --metrics, and a short line on stderr. */
function metricReporter(io: CliIO, spec: TrainCommandSpec, metricsPath: string | undefined, t0: number) {
  const { stage } = spec;
  return (step: number, v: Record<string, number>) => {
    // RL lines name their reward, so runs with different rewards can be told apart and compared.
    const line = {
      stage,
      step,
      time_s: (Date.now() - t0) / 1000,
      ...(stage === 'rl' ? { reward_kind: spec.rl.reward, reward_judge_kind: spec.rl.rewardJudge } : {}),
      ...v,
    };
    if (metricsPath) {
      try {
        appendFileSync(metricsPath, JSON.stringify(line) + '\n');
      } catch (e) {
        throw new FileError(`${metricsPath}: cannot write (${errnoText(e)})`);
      }
    }
    const shown = Object.entries(v)
      .filter(([k]) => !QUIET_METRIC.test(k))
      .map(([k, x]) => `${k} ${Math.abs(x) >= WHOLE_NUMBER_FROM ? x.toFixed(0) : x.toPrecision(4)}`)
      .join('  ');
    io.err(`[${stage} ${step}/${spec.steps}] ${shown}\n`);
  };
}

/** The run's result as the one JSON line on stdout. */
function resultLine(spec: TrainCommandSpec, result: TrainResult, out: string, t0: number): string {
  const { stage } = spec;
  return (
    JSON.stringify({
      stage,
      steps: result.steps,
      checkpoint: out,
      ...(existsSync(optimizerFileName(out)) ? { optimizer_state: optimizerFileName(out) } : {}),
      // RL keeps its best by the held-out reward (rubric + verifier on eval-split turns).
      best:
        result.best &&
        (stage === 'rl'
          ? { step: result.best.step, eval_reward: result.best.evalReward ?? -result.best.evalLoss }
          : { step: result.best.step, eval_loss: result.best.evalLoss }),
      ...(stage === 'rl' ? { reward_kind: spec.rl.reward, reward_judge_kind: spec.rl.rewardJudge } : {}),
      eval_loss: result.evalLoss,
      unigram_loss: result.unigramLoss,
      tokens_per_s: Math.round(result.tokensPerSecond),
      ...(result.coverage && { coverage: result.coverage }),
      // The last evaluation per domain: {"terminal": {"eval_loss": …}, …}.
      ...(result.evalByDomain && { eval_by_domain: result.evalByDomain }),
      seconds: (Date.now() - t0) / 1000,
    }) + '\n'
  );
}

/** The pipeline and the GPU a run needs, loaded only once the run's settings have been checked; null when no adapter opens (said). */
async function openTraining(io: CliIO) {
  const { runTraining } = await import('../../train/pipeline.ts');
  const { UserFacingError } = await import('../../train/context.ts');
  const rt = await openNodeRuntime(io, 'lwm train: ');
  if (!rt) return null;
  io.err(`adapter: ${rt.describe()}\n`);
  return { runTraining, UserFacingError, rt };
}

const train: Command = async (argv, io) => {
  const { values } = parseCommandArgs(argv, OPTIONS, false);
  if (values.help) {
    io.out(`Usage: ${USAGE}\n`);
    return 0;
  }
  if (values.recipe !== undefined) return trainRecipe(values, io);
  if (values.tasks !== undefined)
    throw new UsageError('--tasks adds task-play data to a --recipe run; for a stage of your own, write it with lwm gen --tasks and train on it with --data');
  const spec = trainSpec(values, io);
  if (!spec) return 1;
  if (values.from !== undefined) values.from = await modelArg(io, values.from);
  const hfFrom = values.from !== undefined && isFolder(values.from);
  if (spec.lora && !hfFrom) throw new UsageError('--lora needs --from HF_FOLDER (a Hugging Face model folder)');

  const loaded = await loadTrainingData(io, values.data);
  if (!loaded) return 1;
  const { file } = loaded;
  if (loaded.errorCount > 0) io.err(`${file}: ${loaded.errorCount} bad records skipped; training on the ${loaded.trajectories.length} good ones\n`);

  const loraRun = !!spec.lora || (hfFrom && existsSync(`${values.from}/adapter_config.json`));
  const out = values.out ?? (loraRun ? `lwm-${spec.stage}-lora` : `lwm-${spec.stage}.safetensors`);
  // Before any training: an output that cannot be written fails now, not after the last step.
  if (loraRun) checkLoraOutput(out);
  else checkOutputPath(out);
  if (values.metrics !== undefined) checkOutputPath(values.metrics);
  const sftLabels = values.labels === undefined ? undefined : await readSftLabels(io, values.labels, spec.stage, loaded.trajectories);
  if (sftLabels === null) return 1;
  let from = values.from && !hfFrom ? readStartCheckpoint(io, values.from) : undefined;
  if (from === null) return 1;

  const opened = await openTraining(io);
  if (!opened) return 1;
  const { runTraining, UserFacingError, rt } = opened;
  const t0 = Date.now();
  try {
    const hf = hfFrom
      ? await readHfStart(io, values.from!, {
          rt,
          lora: spec.lora?.rank,
          T: spec.T,
          batch: spec.batch ?? 8,
          memoryGib: memoryGib(values['memory-gib']),
          baseWeights: spec.lora?.baseWeights,
        })
      : undefined;
    if (hf?.from) from = hf.from;
    const result = await runTraining(
      spec,
      loaded.trajectories,
      {
        rt,
        step: async () => {},
        log: (m) => io.err(`${m}\n`),
        metric: metricReporter(io, spec, values.metrics, t0),
        checkpoint: (bytes, info) => {
          writeCheckpoint(info.tag === 'best' ? (loraRun ? `${out}/best` : out.replace(/(\.safetensors)?$/, '.best.safetensors')) : out, bytes);
        },
      },
      from,
      { sftLabels, judgeApiKey: values['judge-api-key'] ?? envApiKey(), ...(hf && { hfBase: hf.hfBase }) },
    );
    writeCheckpoint(out, result.checkpoint);
    io.out(resultLine(spec, result, out, t0));
    return 0;
  } catch (e) {
    if (isUserError(e, [UserFacingError]) || HF_INPUT_ERRORS.includes((e as Error).name)) {
      io.err(`lwm train: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    rt.dispose();
  }
};

/** The options a recipe sets itself: giving one beside --recipe is a usage error, not a silent override. */
const RECIPE_SETS = [
  'stage',
  'preset',
  'data',
  'steps',
  'from',
  'batch',
  'tokens',
  'seed',
  'eval-every',
  'lr',
  'vocab',
  'labels',
  'mask-config',
  'rows',
  'answer-room',
  'group',
  'prompts',
  'max-new',
  'temperature',
  'reward',
  'reward-judge',
  'eval-samples',
  'lora',
] as const;

/** `lwm train --recipe NAME --domain D`: the recipe's data generated here, then its stages in order, each from the last one's weights. */
async function trainRecipe(values: TrainValues, io: CliIO): Promise<number> {
  const { recipeByName, recipeCost, recipeSpecs, recipeTaskPlay, recipeTrajectories, LAPTOP_GPU_FLOPS } = await import('../../train/recipe.ts');
  const { DOMAINS } = await import('../../core/schema/types.ts');
  let recipe;
  try {
    recipe = recipeByName(values.recipe!);
  } catch (e) {
    throw new UsageError(`--recipe: ${(e as Error).message}`);
  }
  const given = RECIPE_SETS.filter((k) => values[k as keyof TrainValues] !== undefined);
  if (given.length) throw new UsageError(`--recipe ${recipe.name} sets the stage, model, data, steps and schedule itself; drop --${given.join(', --')}`);
  const domains = values.domain ?? [];
  if (domains.length !== 1 || !(DOMAINS as readonly string[]).includes(domains[0]))
    throw new UsageError(`--recipe needs one --domain, one of ${DOMAINS.join(', ')}${domains.length ? `; got ${domains.join(', ')}` : ''}`);
  const domain = domains[0] as (typeof DOMAINS)[number];
  const out = values.out ?? `lwm-${recipe.name}-${domain}.safetensors`;
  checkOutputPath(out);
  if (values.metrics !== undefined) checkOutputPath(values.metrics);
  const cost = recipeCost(recipe);
  io.err(
    `recipe ${recipe.name} on ${domain}: ${(cost.params / 1e6).toFixed(2)}M parameters, ${(cost.tokens / 1e6).toFixed(1)}M tokens, ${cost.flops.toExponential(2)} FLOPs (~${Math.round(cost.flops / LAPTOP_GPU_FLOPS / 60)} min at ${LAPTOP_GPU_FLOPS / 1e9} GFLOP/s)\n`,
  );
  let taskFamilies: string[] | undefined;
  if (values.tasks !== undefined) {
    const { taskPlayFamilies } = await import('../../envs/tasks/index.ts');
    try {
      taskFamilies = taskPlayFamilies(domain, values.tasks);
    } catch (e) {
      throw new UsageError(`--tasks: ${(e as Error).message}`);
    }
  }
  const trajectories = recipeTrajectories(recipe, domain);
  io.err(
    `generated ${trajectories.length} ${domain} trajectories (lwm gen --domain ${domain} --seed ${recipe.dataSeed}), ${trajectories.reduce((n, t) => n + t.turns.length, 0)} turns\n`,
  );
  if (taskFamilies) {
    const play = recipeTaskPlay(recipe, domain, trajectories.length, taskFamilies);
    trajectories.push(...play);
    io.err(
      `and ${play.length} task-play trajectories of ${taskFamilies.join(', ')} (lwm gen --domain ${domain} --tasks ${taskFamilies.join(',')} --n ${play.length} --seed ${recipe.dataSeed}), ${play.reduce((n, t) => n + t.turns.length, 0)} turns\n`,
    );
  }
  const opened = await openTraining(io);
  if (!opened) return 1;
  const { runTraining, UserFacingError, rt } = opened;
  const t0 = Date.now();
  try {
    let from: Uint8Array | undefined;
    const specs = recipeSpecs(recipe, domain, { taskPlay: !!taskFamilies });
    for (const [i, spec] of specs.entries()) {
      const cli = { ...spec, rl: spec.rl ?? {} } as TrainCommandSpec;
      io.err(`stage ${i + 1} of ${specs.length}: ${spec.stage}, ${spec.steps} steps of ${spec.batch} × ${spec.T} tokens\n`);
      const result = await runTraining(
        spec,
        trajectories,
        {
          rt,
          step: async () => {},
          log: (m) => io.err(`${m}\n`),
          metric: metricReporter(io, cli, values.metrics, t0),
          checkpoint: (bytes, info) => writeCheckpoint(info.tag === 'best' ? out.replace(/(\.safetensors)?$/, '.best.safetensors') : out, bytes),
        },
        from,
      );
      writeCheckpoint(out, result.checkpoint);
      from = result.checkpoint;
      if (i === specs.length - 1) io.out(resultLine(cli, result, out, t0));
    }
    return 0;
  } catch (e) {
    if (isUserError(e, [UserFacingError])) {
      io.err(`lwm train: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    rt.dispose();
  }
}

export default train;
