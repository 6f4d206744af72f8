// `lwm train`: the training pipeline (src/train/pipeline.ts) in Node, on WebGPU through Dawn —
// the same job code the app's worker runs.
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { checkpointFiles, joinCheckpointFiles, optimizerFileName } from '../../model/checkpoint.ts';
import { checkOutputPath, errnoText, FileError, inputFileProblem, intOption, parseCommandArgs, UsageError, writeFileAtomicSync, type Command } from '../io.ts';
import { PRESETS, type PresetName } from '../../model/config.ts';
import { loadFile } from './validate.ts';
import { DEFAULT_DATASET } from './validate.ts';
import { readMaskConfigFile } from './mask.ts';

const USAGE = `lwm train --stage cpt|sft|rl --preset ${Object.keys(PRESETS).join('|')} [--data FILE | --domain D] [--steps N] [--from CKPT] [-o CKPT] [--metrics FILE]
  [--batch B] [--tokens T] [--seed S] [--eval-every N] [--lr PEAK] [--vocab V] [--mask-config CFG]
  [--reward rubric|reference-ab|turing]            (RL: the reward; default rubric = 0.9 judge + 0.1 verifier)
  [--reward-judge local|endpoint --judge-base-url U --judge-model M --judge-api-key K]
  [--eval-samples N]                               (RL: held-out turns judged at each evaluation; default 8)
  [--labels LABELS.jsonl]                          (SFT: train on chosen labels, e.g. from lwm labels)
  [--group G] [--prompts P] [--max-new N]          (RL: samples per prompt, prompts per step, response length)
  [--temperature T]                                (RL: rollout sampling temperature, > 0, default 1; GSPO's
                                                    log-probs are those of the same tempered distribution)
-o X.safetensors: the weights (loads in Hugging Face tools) there, the optimizer state in X.optim.safetensors,
which --from X.safetensors picks up to resume a run of the same stage.`;

/** Checkpoints go through writeFileAtomicSync: a crash mid-write leaves the previous file whole. */
const writeAtomic = writeFileAtomicSync;

/** A checkpoint as two files: PATH (weights, loads in Hugging Face tools) and PATH's .optim.safetensors. */
function writeCheckpoint(path: string, bytes: Uint8Array) {
  const files = checkpointFiles(bytes, path);
  if (files.optimizer) writeAtomic(optimizerFileName(path), files.optimizer);
  else rmSync(optimizerFileName(path), { force: true });
  writeAtomic(path, files.weights);
}

const int = (name: string, v: string | undefined, min = 1): number | undefined => (v === undefined ? undefined : intOption(name, v, min));

const train: Command = async (argv, io) => {
  const { values } = parseCommandArgs(
    argv,
    {
      stage: { type: 'string' },
      preset: { type: 'string', default: 'micro' },
      data: { type: 'string' },
      domain: { type: 'string', multiple: true },
      steps: { type: 'string', default: '100' },
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
      labels: { type: 'string' },
      reward: { type: 'string' },
      'reward-judge': { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
      'judge-api-key': { type: 'string' },
      'eval-samples': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  );
  if (values.help) {
    io.out(`Usage: ${USAGE}\n`);
    return 0;
  }
  const stage = values.stage;
  if (stage !== 'cpt' && stage !== 'sft' && stage !== 'rl') throw new UsageError(`--stage must be cpt, sft or rl\nusage: ${USAGE}`);
  if (!(values.preset! in PRESETS)) throw new UsageError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}; got '${values.preset}'`);
  const temperature = values.temperature === undefined ? undefined : Number(values.temperature);
  if (temperature !== undefined && !(temperature > 0 && Number.isFinite(temperature))) throw new UsageError(`--temperature must be a number above 0, got '${values.temperature}'`);
  const lr = values.lr === undefined ? undefined : Number(values.lr);
  if (lr !== undefined && !(lr > 0 && lr < 1)) throw new UsageError(`--lr must be a number in (0, 1), got '${values.lr}'`);
  // The loss mask's thresholds and ratios (the file `lwm mask --write-config` writes).
  const mask = values['mask-config'] ? readMaskConfigFile(values['mask-config'], io) : undefined;
  if (mask === null) return 1;
  const reward = values.reward ?? 'rubric';
  if (reward !== 'rubric' && reward !== 'reference-ab' && reward !== 'turing') throw new UsageError(`--reward must be rubric, reference-ab or turing; got '${reward}'`);
  const rewardJudge = values['reward-judge'] ?? 'local';
  if (rewardJudge !== 'local' && rewardJudge !== 'endpoint') throw new UsageError(`--reward-judge must be local or endpoint; got '${rewardJudge}'`);
  if (rewardJudge === 'endpoint' && (!values['judge-base-url'] || !values['judge-model'])) throw new UsageError('--reward-judge endpoint needs --judge-base-url and --judge-model');
  const rlOnly = ['reward', 'reward-judge', 'judge-base-url', 'judge-model', 'eval-samples'].filter((k) => values[k as keyof typeof values] !== undefined);
  if (stage !== 'rl' && rlOnly.length) throw new UsageError(`--${rlOnly[0]} is for --stage rl`);
  const spec = {
    kind: 'train' as const,
    stage: stage as 'cpt' | 'sft' | 'rl',
    preset: values.preset as PresetName,
    steps: int('steps', values.steps)!,
    batch: int('batch', values.batch),
    T: int('tokens', values.tokens, 8),
    seed: int('seed', values.seed, 0),
    evalEvery: int('eval-every', values['eval-every']),
    vocabSize: int('vocab', values.vocab, 267),
    domains: values.domain,
    ...(lr !== undefined && { lr: { peak: lr, min: lr / 10 } }),
    rl: {
      groupSize: int('group', values.group, 2),
      promptsPerStep: int('prompts', values.prompts),
      maxNewTokens: int('max-new', values['max-new']),
      temperature,
      evalSamples: int('eval-samples', values['eval-samples']),
      reward: reward as 'rubric' | 'reference-ab' | 'turing',
      rewardJudge: rewardJudge as 'local' | 'endpoint',
      // The key stays out of the spec: the spec is stored in every checkpoint.
      ...(rewardJudge === 'endpoint' ? { judgeEndpoint: { baseUrl: values['judge-base-url']!, model: values['judge-model']! } } : {}),
    },
    ...(mask && { mask }),
  };
  spec.rl = Object.fromEntries(Object.entries(spec.rl).filter(([, v]) => v !== undefined)) as typeof spec.rl;

  const file = values.data ?? DEFAULT_DATASET;
  if (!values.data) io.err(`(no --data: using the built-in default dataset, ${file})\n`);
  const loaded = await loadFile(io, file);
  if (!loaded.readable || loaded.trajectories.length === 0) {
    io.err(`${file}: no usable trajectories\n`);
    return 1;
  }
  if (loaded.errorCount > 0) io.err(`${file}: ${loaded.errorCount} bad records skipped; training on the ${loaded.trajectories.length} good ones\n`);

  const out = values.out ?? `lwm-${stage}.safetensors`;
  // Before any training: an output that cannot be written fails now, not after the last step.
  checkOutputPath(out);
  if (values.metrics !== undefined) checkOutputPath(values.metrics);
  // Labels are read (and every problem reported) before the GPU starts.
  let sftLabels: import('../../train/rejection.ts').SftLabel[] | undefined;
  if (values.labels !== undefined) {
    if (stage !== 'sft') throw new UsageError(`--labels is for --stage sft (the labels replace the reference observations); got --stage ${stage}`);
    const { readLabelFile } = await import('../../train/labels.ts');
    let text: string;
    try {
      text = readFileSync(values.labels, 'utf8');
    } catch (e) {
      io.err(`${values.labels}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return 1;
    }
    const r = readLabelFile(text, values.labels, loaded.trajectories);
    if (r.errors.length) {
      io.err(r.errors.join('\n') + '\n');
      return 1;
    }
    if (r.labels.length === 0) {
      io.err(`${values.labels}: no labels to train on\n`);
      return 1;
    }
    sftLabels = r.labels;
    io.err(`${values.labels}: ${r.labels.length} labels\n`);
  }

  let from: Uint8Array | undefined;
  if (values.from) {
    const problem = inputFileProblem(values.from);
    if (problem) {
      io.err(problem + '\n');
      return 1;
    }
    try {
      from = new Uint8Array(readFileSync(values.from));
    } catch (e) {
      io.err(`${values.from}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return 1;
    }
    // The optimizer state beside the weights, when there, lets a run of the same stage resume.
    const optPath = optimizerFileName(values.from);
    if (existsSync(optPath)) {
      try {
        from = joinCheckpointFiles({ weights: from, optimizer: new Uint8Array(readFileSync(optPath)) }, values.from);
      } catch (e) {
        io.err(`${(e as Error).message}\n`);
        return 1;
      }
    }
  }

  const { nodeGpu } = await import('../../gpu/node.ts');
  const { GpuRuntime } = await import('../../gpu/runtime.ts');
  const { runTraining } = await import('../../train/pipeline.ts');
  const { UserFacingError } = await import('../../train/host.ts');
  let rt;
  try {
    rt = await GpuRuntime.create({ gpu: await nodeGpu() });
  } catch (e) {
    io.err(`lwm train: ${(e as Error).message}\n`);
    return 1;
  }
  io.err(`adapter: ${rt.describe()}\n`);
  const t0 = Date.now();
  try {
    const result = await runTraining(
      spec,
      loaded.trajectories,
      {
        rt,
        step: async () => {},
        log: (m) => io.err(`${m}\n`),
        metric: (step, v) => {
          // RL lines name their reward, so runs with different rewards can be told apart and compared.
          const line = { stage, step, time_s: (Date.now() - t0) / 1000, ...(stage === 'rl' ? { reward_kind: reward, reward_judge_kind: rewardJudge } : {}), ...v };
          if (values.metrics) {
            try {
              appendFileSync(values.metrics, JSON.stringify(line) + '\n');
            } catch (e) {
              throw new FileError(`${values.metrics}: cannot write (${errnoText(e)})`);
            }
          }
          const shown = Object.entries(v)
            .filter(([k]) => !k.startsWith('judge_') && !k.startsWith('eval_judge_') && !k.startsWith('share_'))
            .map(([k, x]) => `${k} ${Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(4)}`)
            .join('  ');
          io.err(`[${stage} ${step}/${spec.steps}] ${shown}\n`);
        },
        checkpoint: (bytes, info) => {
          writeCheckpoint(info.tag === 'best' ? out.replace(/(\.safetensors)?$/, '.best.safetensors') : out, bytes);
        },
      },
      from,
      { sftLabels, judgeApiKey: values['judge-api-key'] ?? process.env.LWM_API_KEY ?? process.env.OPENAI_API_KEY },
    );
    writeCheckpoint(out, result.checkpoint);
    io.out(
      JSON.stringify({
        stage,
        steps: result.steps,
        checkpoint: out,
        ...(existsSync(optimizerFileName(out)) ? { optimizer_state: optimizerFileName(out) } : {}),
        // RL keeps its best by the held-out reward (rubric + verifier on eval-split turns).
        best: result.best && (stage === 'rl' ? { step: result.best.step, eval_reward: result.best.evalReward ?? -result.best.evalLoss } : { step: result.best.step, eval_loss: result.best.evalLoss }),
        ...(stage === 'rl' ? { reward_kind: reward, reward_judge_kind: rewardJudge } : {}),
        eval_loss: result.evalLoss,
        unigram_loss: result.unigramLoss,
        tokens_per_s: Math.round(result.tokensPerSecond),
        ...(result.coverage && { coverage: result.coverage }),
        seconds: (Date.now() - t0) / 1000,
      }) + '\n',
    );
    return 0;
  } catch (e) {
    if (e instanceof UserFacingError || (e as Error).name === 'CheckpointError' || (e as Error).name === 'SafetensorsError') {
      io.err(`lwm train: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    rt.dispose();
  }
};

export default train;
