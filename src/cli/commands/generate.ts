// `lwm generate --model PATH (--prompt TEXT | --chat TEXT) [...]`: one generation on the GPU from
// a checkpoint of ours (`.safetensors`, with the tokenizer it carries) or a Hugging Face model
// folder (config.json, safetensors weights, tokenizer.json; src/model/hf/load.ts). A Hugging Face
// prompt is tokenized as transformers' tokenizer(text) does (its post-processor's special tokens
// included), a chat message as apply_chat_template(..., add_generation_prompt=True), and
// generation stops at generation_config.json's eos ids (kept in the output, as generate() does).
// An ONNX causal-LM folder (onnx/model.onnx, src/model/onnx/layout.ts) runs through
// onnxruntime-web's WASM execution provider instead (--backend onnx, or a folder with ONNX files
// and no safetensors).
import { readFileSync, statSync } from 'node:fs';
import { intOption, parseCommandArgs, UsageError, FileError, type CliIO } from '../io.ts';
import { modelArg } from './common.ts';
import type { SamplingOptions } from '../../model/generate.ts';
import type { ModelConfig } from '../../core/model/config.ts';
import { paramLayout } from '../../core/model/params.ts';
import { ParamBuffers, planFor } from '../../model/shards.ts';
import type { WeightStorage } from '../../model/halfWeights.ts';

const HELP = `Usage: lwm generate --model PATH (--prompt TEXT | --chat TEXT) [options]

Generates from a model on the GPU (WebGPU through Dawn), or an ONNX model through onnxruntime-web,
and prints the text.

  --model PATH        a checkpoint of ours (FILE.safetensors, its own tokenizer), a Hugging Face
                      model folder (config.json, *.safetensors, tokenizer.json; Llama, Qwen2, Qwen3)
                      or an ONNX causal-LM folder (onnx/model.onnx, config.json, tokenizer.json);
                      or a Hugging Face Hub id, org/name[@revision], downloaded into the Hugging
                      Face cache (HF_HUB_CACHE, HF_TOKEN, HF_HUB_OFFLINE: docs/cli.md)
  --prompt TEXT       the prompt, tokenized as Hugging Face's tokenizer(TEXT) does (special tokens
                      its post-processor adds included)
  --chat TEXT         one user message, rendered with the model's chat template and the
                      generation prompt (Hugging Face folders with a chat template);
                      the message is text (an added token's string in it is not that token)
  --max-tokens N      most tokens generated (default 64); generation also stops at the model's
                      end-of-sequence ids (generation_config.json's eos_token_id)
  --temperature T     0 (the default) is greedy
  --top-k K, --top-p P, --seed S   sampling
  --backend B         wgsl: our WGSL engine; onnx: onnxruntime-web (WASM) on an ONNX folder.
                      Default: onnx for a folder with onnx/*.onnx and no safetensors, else wgsl
  --variant V         onnx: which model file (fp32 = onnx/model.onnx, fp16, q4, quantized, … =
                      onnx/model_V.onnx, or a file name); default model.onnx where there is one
  --memory-gib G      device memory the model may take, in GiB (default 8; WebGPU reports none):
                      a model that needs more is refused with what would fit
  --weights W         wgsl: how the weights are held on the GPU: f32 (the default) or f16 (half
                      the memory of the matrices, f32 accumulation, on any adapter; logits move by
                      f16 rounding, ~1e-3 relative). With it, the weights' GPU bytes go to stderr
  --json              print {"prompt_ids": [...], "ids": [...generated ids...], "text": "..."}
`;

const OPTIONS = {
  model: { type: 'string' },
  prompt: { type: 'string' },
  chat: { type: 'string' },
  'max-tokens': { type: 'string' },
  temperature: { type: 'string' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  seed: { type: 'string' },
  backend: { type: 'string' },
  variant: { type: 'string' },
  'memory-gib': { type: 'string' },
  weights: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function numOption(name: string, v: string, lo: number, hi: number, loOpen = false): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < lo || n > hi || (loOpen && n === lo))
    throw new UsageError(`--${name} must be a number in ${loOpen ? '(' : '['}${lo}, ${hi}], got ${JSON.stringify(v)}`);
  return n;
}

export interface GenerateArgs {
  model: string;
  input: { kind: 'prompt' | 'chat'; text: string };
  maxTokens: number;
  sampling: SamplingOptions;
  memoryBudget: number;
  json: boolean;
  /** undefined: chosen from what --model is. */
  backend?: 'wgsl' | 'onnx';
  variant?: string;
  /** wgsl: how the weights are held on the GPU; undefined: f32, nothing reported. */
  weights?: WeightStorage;
}

/** The command's arguments, checked (UsageError: exit 2); null for --help. */
export function parseGenerateArgs(argv: string[]): GenerateArgs | null {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
  if (values.help) return null;
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}' (the model is given with --model PATH)`);
  const backend = values.backend;
  if (backend !== undefined && backend !== 'wgsl' && backend !== 'onnx') throw new UsageError(`--backend must be wgsl or onnx, got ${JSON.stringify(backend)}`);
  if (values.variant !== undefined && backend === 'wgsl') throw new UsageError('--variant is for --backend onnx (it picks the ONNX model file)');
  const weights = values.weights;
  if (weights !== undefined && weights !== 'f32' && weights !== 'f16') throw new UsageError(`--weights must be f32 or f16, got ${JSON.stringify(weights)}`);
  if (weights !== undefined && backend === 'onnx')
    throw new UsageError('--weights is for --backend wgsl (an ONNX model file has its own precision: pick it with --variant)');
  if (!values.model) throw new UsageError('--model PATH is required (a .safetensors checkpoint, a Hugging Face model folder or an ONNX folder)');
  if ((values.prompt === undefined) === (values.chat === undefined)) throw new UsageError('give exactly one of --prompt TEXT and --chat TEXT');
  const input = values.prompt !== undefined ? { kind: 'prompt' as const, text: values.prompt } : { kind: 'chat' as const, text: values.chat! };
  const temperature = values.temperature === undefined ? 0 : numOption('temperature', values.temperature, 0, 100);
  const sampling: SamplingOptions = { temperature };
  if (values['top-k'] !== undefined) sampling.topK = intOption('top-k', values['top-k'], 1);
  if (values['top-p'] !== undefined) sampling.topP = numOption('top-p', values['top-p'], 0, 1, true);
  if (values.seed !== undefined) sampling.seed = intOption('seed', values.seed, 0, 2 ** 32 - 1);
  const gib = values['memory-gib'] === undefined ? 8 : numOption('memory-gib', values['memory-gib'], 0, 1 << 20, true);
  return {
    model: values.model,
    input,
    maxTokens: values['max-tokens'] === undefined ? 64 : intOption('max-tokens', values['max-tokens'], 1),
    sampling,
    memoryBudget: Math.floor(gib * 2 ** 30),
    json: values.json ?? false,
    ...(backend !== undefined && { backend }),
    ...(values.variant !== undefined && { variant: values.variant }),
    ...(weights !== undefined && { weights }),
  };
}

/** A model ready to generate: its config and weights, and how text becomes ids and back. */
interface Loaded {
  config: ModelConfig;
  params: Float32Array;
  promptIds: number[];
  stop: number[];
  decode(ids: number[]): string;
}

type Runtime = import('../../gpu/runtime.ts').GpuRuntime;

async function loadFolder(rt: Runtime, args: GenerateArgs): Promise<Loaded> {
  const { nodeFolder } = await import('../../model/hf/node.ts');
  const { loadHfModel, limitsFromReport } = await import('../../model/hf/load.ts');
  const files = await nodeFolder(args.model);
  let promptIds: number[] = [];
  const m = await loadHfModel(files, {
    limits: limitsFromReport(rt.report, args.memoryBudget),
    ...(args.weights && { weights: args.weights }),
    // The prompt is counted before the memory check: the run holds the prompt and the new tokens.
    context: (tok) => {
      promptIds = hfPromptIds(tok, args);
      return promptIds.length + args.maxTokens;
    },
  });
  const tok = m.tokenizer!;
  return { config: m.config, params: m.params, promptIds, stop: m.stopIds, decode: (ids) => tok.decode(ids) };
}

async function loadOurs(args: GenerateArgs): Promise<Loaded> {
  const { loadCheckpoint } = await import('../../core/model/checkpoint.ts');
  const { checkpointTokenizer } = await import('../../backends/checkpoint.ts');
  const ck = loadCheckpoint(new Uint8Array(readFileSync(args.model)), { source: args.model });
  // A fine-tune of a Hugging Face model: its base's tokenizer, chat template and stop ids, as for the folder.
  if (ck.extraMetadata?.hf_base) {
    const { baseFromJson, openHfBase } = await import('../../model/hf/base.ts');
    let base;
    try {
      base = openHfBase(baseFromJson(ck.extraMetadata.hf_base));
    } catch (e) {
      throw new FileError(`${args.model}: its base model (metadata hf_base) cannot be read: ${(e as Error).message}`);
    }
    const tok = base.tokenizer;
    return { config: ck.config, params: ck.params, promptIds: hfPromptIds(tok, args), stop: base.stopIds, decode: (ids) => tok.decode(ids) };
  }
  if (args.input.kind === 'chat')
    throw new UsageError(`--chat needs a model with a chat template (a Hugging Face folder); ${args.model} is a checkpoint of ours: use --prompt`);
  const tok = checkpointTokenizer(ck, args.model);
  const promptIds = tok.encode(args.input.text, { allowSpecial: true });
  return { config: ck.config, params: ck.params, promptIds, stop: [tok.special.eos], decode: (ids) => tok.decode(ids) };
}

/** Whether a folder holds ONNX files and no safetensors weights (then it is run through onnxruntime-web). */
async function onnxWithoutSafetensors(dir: string): Promise<boolean> {
  const { nodeFolder } = await import('../../model/hf/node.ts');
  const { isOnnxFolder } = await import('../../model/onnx/layout.ts');
  const list = (await nodeFolder(dir)).list();
  return isOnnxFolder(list) && !list.some((p) => p.endsWith('.safetensors'));
}

/** The prompt's ids with a Hugging Face tokenizer (folders: Hugging Face's and ONNX ones). */
function hfPromptIds(tok: import('../../core/tokenizer/hf.ts').HfTokenizer | null, args: GenerateArgs): number[] {
  if (!tok) throw new FileError(`${args.model}: has no tokenizer (tokenizer.json), so text cannot be turned into ids`);
  if (args.input.kind === 'chat' && !tok.chatTemplateNames.length)
    throw new FileError(
      `${args.model}: has no chat template (tokenizer_config.json's chat_template or chat_template.jinja), so --chat cannot be rendered; use --prompt`,
    );
  return args.input.kind === 'prompt'
    ? tok.encode(args.input.text)
    : tok.encodeChat([{ role: 'user', content: args.input.text }], { addGenerationPrompt: true });
}

/** `--backend onnx`: the folder's model in onnxruntime-web (WASM), the same sampling and output as the GPU path. */
async function generateOnnx(args: GenerateArgs, io: CliIO): Promise<number> {
  const { nodeFolder } = await import('../../model/hf/node.ts');
  const { loadOnnxModel } = await import('../../model/onnx/load.ts');
  let m;
  try {
    m = await loadOnnxModel(await nodeFolder(args.model), { variant: args.variant, executionProvider: 'wasm' });
  } catch (e) {
    const message = (e as Error).message;
    throw new FileError(message.startsWith(args.model) ? message : `${args.model}: ${message}`);
  }
  try {
    const tok = m.tokenizer;
    const promptIds = hfPromptIds(tok, args);
    if (!promptIds.length) throw new UsageError('the prompt gives no tokens');
    const ids: number[] = [];
    for await (const id of m.decoder.generate(promptIds, { maxNewTokens: args.maxTokens, sampling: args.sampling, stop: m.stopIds })) ids.push(id);
    const text = tok!.decode(ids);
    io.out(args.json ? JSON.stringify({ prompt_ids: promptIds, ids, text }) + '\n' : text + '\n');
    return 0;
  } finally {
    m.decoder.dispose();
  }
}

export default async function generate(argv: string[], io: CliIO): Promise<number> {
  const args = parseGenerateArgs(argv);
  if (!args) {
    io.out(HELP);
    return 0;
  }
  args.model = await modelArg(io, args.model);
  let isDir: boolean;
  try {
    isDir = statSync(args.model).isDirectory();
  } catch (e) {
    throw new FileError(`${args.model}: cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const backend = args.backend ?? (isDir && (await onnxWithoutSafetensors(args.model)) ? 'onnx' : 'wgsl');
  if (backend === 'onnx') {
    if (!isDir) throw new UsageError(`--backend onnx: --model ${args.model} must be an ONNX model folder (onnx/model.onnx, config.json, tokenizer.json)`);
    if (args.weights)
      throw new UsageError(`--weights is for our WGSL engine; ${args.model} is an ONNX folder run through onnxruntime-web (pick its precision with --variant)`);
    return generateOnnx(args, io);
  }
  if (!isDir && !args.model.endsWith('.safetensors'))
    throw new UsageError(`--model ${args.model}: must be a .safetensors checkpoint or a Hugging Face model folder`);
  const { nodeRuntime } = await import('../../gpu/node.ts');
  const { GpuGenerator } = await import('../../model/generate.ts');
  const rt = await nodeRuntime();
  try {
    let m: Loaded;
    try {
      m = isDir ? await loadFolder(rt, args) : await loadOurs(args);
    } catch (e) {
      if (e instanceof UsageError || e instanceof FileError) throw e;
      const message = (e as Error).message;
      throw new FileError(message.startsWith(args.model) ? message : `${args.model}: ${message}`);
    }
    if (!m.promptIds.length) throw new UsageError('the prompt gives no tokens');
    const length = m.promptIds.length + args.maxTokens;
    if (!isDir && length > m.config.contextLength) {
      throw new UsageError(
        `the prompt (${m.promptIds.length} tokens) and --max-tokens ${args.maxTokens} exceed the model's context of ${m.config.contextLength} tokens`,
      );
    }
    const params = ParamBuffers.upload(rt, planFor(rt, paramLayout(m.config), args.weights), m.params, 'generate.params');
    if (args.weights)
      io.err(
        `weights: ${args.weights}, ${params.bytes} bytes on the GPU in ${params.buffers.length} buffer${params.buffers.length > 1 ? 's' : ''}${args.weights === 'f16' ? ' (matrices f16, norms and biases f32)' : ''}\n`,
      );
    const gen = new GpuGenerator(rt, m.config, params, { maxSequences: 1, maxLength: length });
    const ids: number[] = [];
    try {
      for await (const id of gen.generate(m.promptIds, { maxNewTokens: args.maxTokens, sampling: args.sampling, stop: m.stop })) ids.push(id);
    } finally {
      gen.dispose();
      params.release();
    }
    const text = m.decode(ids);
    io.out(args.json ? JSON.stringify({ prompt_ids: m.promptIds, ids, text }) + '\n' : text + '\n');
    return 0;
  } finally {
    rt.dispose();
  }
}
