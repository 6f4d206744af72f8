// The `lwm` command line: one entry, one module per command under ./commands.
// Exit codes: 0 fine, 1 invalid input or no GPU (errors on stderr, one per line), 2 usage error.
// Whether a command needs the GPU's environment (bin/lwm.mjs sets it) is decided in ./gpuUse.ts.
import { WebGPUUnavailableError } from '../gpu/errors.ts';
import type { CliIO, Command } from './io.ts';
import { FileError, nodeIO, safeIO, UsageError } from './io.ts';

/** Commands load lazily so `lwm validate` does not pay for the GPU engine. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ default: Command }> }> = {
  validate: { summary: 'validate FILE                 check trajectories against the schema', load: () => import('./commands/validate.ts') },
  convert: { summary: 'convert FILE --to FORMAT      convert between trajectory formats', load: () => import('./commands/convert.ts') },
  expand: { summary: 'expand FILE [--seed N]        turn samples, train/eval split, RL pool', load: () => import('./commands/expand.ts') },
  mask: { summary: 'mask FILE                     mask-category table per domain', load: () => import('./commands/mask.ts') },
  tokenizer: { summary: 'tokenizer train FILE ...      train a byte-level BPE tokenizer', load: () => import('./commands/tokenizer.ts') },
  tokenize: { summary: 'tokenize --model DIR ...      token ids as Hugging Face gives them', load: () => import('./commands/tokenize.ts') },
  gen: { summary: 'gen --domain D --n N --seed S generate trajectories from built-in environments', load: () => import('./commands/gen.ts') },
  env: { summary: 'env DOMAIN --seed S           play a built-in environment on stdin/stdout', load: () => import('./commands/env.ts') },
  generate: {
    summary: 'generate --model PATH --prompt T one generation from a checkpoint or a Hugging Face folder',
    load: () => import('./commands/generate.ts'),
  },
  infer: { summary: 'infer RECORDS --backend B      predictions for AgentWorldBench records', load: () => import('./commands/infer.ts') },
  judge: { summary: 'judge PRED.jsonl --judge J    judge predictions against references', load: () => import('./commands/judge.ts') },
  optimize: {
    summary: 'optimize --template F --data F -o DIR improve a prompt template (judged rounds, paired test)',
    load: () => import('./commands/optimize.ts'),
  },
  serve: {
    summary: 'serve --model M [--port N]      a world model behind the OpenAI API (chat, completions, streaming)',
    load: () => import('./commands/serve.ts'),
  },
  score: { summary: 'score JUDGED.jsonl            AgentWorldBench score table', load: () => import('./commands/score.ts') },
  agree: { summary: 'agree FILE...                 judge agreement (Spearman, Kendall, Pearson)', load: () => import('./commands/agree.ts') },
  labels: { summary: 'labels --teacher T -o FILE     SFT labels by rejection sampling (for train --labels)', load: () => import('./commands/labels.ts') },
  train: { summary: 'train --stage cpt|sft|rl ...  train a model on WebGPU (Dawn)', load: () => import('./commands/train.ts') },
  agent: {
    summary: 'agent train --env real --domain D --families F -o OUT  an agent policy: imitation, then GSPO on task success',
    load: () => import('./commands/agentTrain.ts'),
  },
  export: { summary: 'export CKPT --to hf -o DIR     a checkpoint as a Hugging Face folder', load: () => import('./commands/export.ts') },
  gpu: { summary: 'gpu                           show the WebGPU adapter and run the self-test', load: () => import('./commands/gpu.ts') },
};

/** Every command's name, in the order usage lists them. */
export function commandNames(): string[] {
  return Object.keys(COMMANDS);
}

export function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  lwm ${c.summary}`);
  return ['Usage:', ...lines, '', "Run `lwm COMMAND --help` for a command's options."].join('\n');
}

export async function main(argv: string[], rawIO: CliIO = nodeIO()): Promise<number> {
  // Everything printed goes through escapeControl (and stderr through redactCredentials).
  const io = safeIO(rawIO);
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(usage() + '\n');
    return name ? 0 : 2;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.err(`lwm: unknown command '${name}'\n${usage()}\n`);
    return 2;
  }
  let mod: { default: Command };
  try {
    mod = await entry.load();
  } catch (e) {
    io.err(`lwm ${name}: this command is not available in this build (${(e as Error).message})\n`);
    return 2;
  }
  try {
    return await mod.default(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`lwm ${name}: ${e.message}\n`);
      return 2;
    }
    // No GPU adapter: what to install, not a stack (src/gpu/node.ts NODE_WEBGPU_HELP).
    if (e instanceof FileError || e instanceof WebGPUUnavailableError) {
      io.err(`lwm ${name}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    // The command is done with the GPU: a device kept for a next runtime would keep the process running.
    (await import('../gpu/node.ts')).closeNodeRuntimes();
  }
}
