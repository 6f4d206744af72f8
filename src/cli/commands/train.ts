// `lwm train`: the training pipeline (src/train/pipeline.ts) in Node, on WebGPU through Dawn —
// the same job code the app's worker runs.
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseCommandArgs, UsageError, type Command } from '../io.ts';
import { PRESETS, type PresetName } from '../../model/config.ts';
import { loadFile } from './validate.ts';
import { DEFAULT_DATASET } from './validate.ts';

const USAGE = `lwm train --stage cpt|sft|rl --preset ${Object.keys(PRESETS).join('|')} [--data FILE | --domain D] [--steps N] [--from CKPT] [-o CKPT] [--metrics FILE]
  [--batch B] [--tokens T] [--seed S] [--eval-every N] [--lr PEAK] [--vocab V]
  [--group G] [--prompts P] [--max-new N]          (RL: samples per prompt, prompts per step, response length)`;

/** Writes next to the target, then renames: a crash mid-write leaves the previous file whole. */
function writeAtomic(path: string, bytes: Uint8Array) {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, path);
}

const int = (name: string, v: string | undefined, min = 1): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${v}'`);
  return n;
};

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
  const lr = values.lr === undefined ? undefined : Number(values.lr);
  if (lr !== undefined && !(lr > 0 && lr < 1)) throw new UsageError(`--lr must be a number in (0, 1), got '${values.lr}'`);
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
    rl: { groupSize: int('group', values.group, 2), promptsPerStep: int('prompts', values.prompts), maxNewTokens: int('max-new', values['max-new']) },
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

  let from: Uint8Array | undefined;
  if (values.from) {
    try {
      from = new Uint8Array(readFileSync(values.from));
    } catch (e) {
      io.err(`${values.from}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
      return 1;
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
  const out = values.out ?? `lwm-${stage}.safetensors`;
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
          const line = { stage, step, time_s: (Date.now() - t0) / 1000, ...v };
          if (values.metrics) appendFileSync(values.metrics, JSON.stringify(line) + '\n');
          const shown = Object.entries(v)
            .filter(([k]) => !k.startsWith('judge_') && !k.startsWith('eval_judge_') && !k.startsWith('share_'))
            .map(([k, x]) => `${k} ${Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(4)}`)
            .join('  ');
          io.err(`[${stage} ${step}/${spec.steps}] ${shown}\n`);
        },
        checkpoint: (bytes, info) => {
          writeAtomic(info.tag === 'best' ? out.replace(/(\.safetensors)?$/, '.best.safetensors') : out, bytes);
        },
      },
      from,
    );
    writeAtomic(out, result.checkpoint);
    io.out(
      JSON.stringify({
        stage,
        steps: result.steps,
        checkpoint: out,
        // RL keeps its best by mean reward (stored as a negative "loss" so lower is better).
        best: result.best && (stage === 'rl' ? { step: result.best.step, mean_reward: -result.best.evalLoss } : { step: result.best.step, eval_loss: result.best.evalLoss }),
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
