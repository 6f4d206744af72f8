// Which `lwm` commands open a GPU device (Dawn), by their arguments: the one place that decides.
// bin/lwm.mjs re-runs itself with the Vulkan environment (scripts/chromium.mjs gpuEnv: the
// SwiftShader driver and the Vulkan loader Debian's chromium ships) for these, since the dynamic
// linker reads LD_LIBRARY_PATH only when a process starts. gpuUse.test.ts holds every command of
// main.ts to an entry here. A command that may open a device says yes: the environment costs
// nothing where no device is opened, and without it Dawn finds no adapter.
// Imports nothing, so that the entry decides before it loads any of the CLI.

/** Whether a command opens a device: always, never, or by its arguments (the command's name removed). */
export type GpuUse = boolean | ((args: readonly string[]) => boolean);

/** The value of --name (`--name V` or `--name=V`); undefined when not given. */
function option(args: readonly string[], name: string): string | undefined {
  const flag = `--${name}`;
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    if (args[i] === flag) return args[i + 1];
    if (args[i].startsWith(`${flag}=`)) return args[i].slice(flag.length + 1);
  }
  return undefined;
}

/** Whether the flag --name is given (before any `--`). */
function given(args: readonly string[], name: string): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).includes(`--${name}`);
}

export const GPU_USE: Readonly<Record<string, GpuUse>> = {
  // Data, tokenizers and environments: the CPU.
  validate: false,
  convert: false,
  expand: false,
  mask: false,
  tokenizer: false,
  tokenize: false,
  gen: false,
  env: false,
  // Our WGSL engine; --backend onnx runs onnxruntime-web on the CPU (WASM). Without --backend an
  // ONNX-only folder picks onnx too, which the arguments do not show: yes.
  generate: (args) => option(args, 'backend') !== 'onnx',
  // --backend local: a checkpoint of ours on the GPU; onnx, endpoint and the baselines: not.
  infer: (args) => option(args, 'backend') === 'local',
  // --judge local is the rubric (the CPU), --judge endpoint a server.
  judge: false,
  // The simulator as lwm infer's --backend; --resume without --backend takes the run's (DIR/run.json).
  optimize: (args) => {
    const backend = option(args, 'backend');
    return backend === 'local' || (backend === undefined && given(args, 'resume'));
  },
  score: false,
  agree: false,
  // --teacher local: the --from checkpoint on the GPU; --teacher endpoint: a server.
  labels: (args) => option(args, 'teacher') !== 'endpoint',
  train: true,
  // The policy trains and acts on the GPU; --help and usage errors are answered before it opens.
  agent: true,
  // Every export path (--to hf, --to onnx, adapters merged) reads the weights on the CPU (export.ts CPU_LIMITS).
  export: false,
  gpu: true,
  // A served checkpoint or Hugging Face folder opens a device; copy-last and --envs alone do not. An ONNX folder
  // (onnxruntime-web, WASM) does not either, but only the folder's files tell: yes.
  serve: (args) => {
    const model = option(args, 'model');
    return model !== undefined && model !== 'copy-last';
  },
};

/** Whether `lwm ARGV...` needs the GPU's environment; false for usage, help and unknown commands. */
export function needsGpu(argv: readonly string[]): boolean {
  const [name, ...args] = argv;
  if (!name || !Object.hasOwn(GPU_USE, name)) return false;
  const use = GPU_USE[name];
  return typeof use === 'boolean' ? use : use(args);
}
