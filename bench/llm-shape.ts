// The `llm` suite's pure half: the model it runs (SmolLM2-135M's config.json, optionally shrunk
// by the command line's --layers), its options, the records it reports and the summary table it
// prints. No GPU and no onnxruntime here, so the unit tests check all of it in Node.
import { configFromHf } from '../src/model/hf/config.ts';
import type { ModelConfig } from '../src/core/model/config.ts';
import { initParams } from '../src/model/init.ts';
import { paramLayout } from '../src/core/model/params.ts';
import type { BenchRecord } from './common.ts';

/** SmolLM2-135M's config.json (HuggingFaceTB/SmolLM2-135M): Llama, 30 layers of width 576, 9 query and 3 KV heads. */
export const SMOLLM2_135M_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  vocab_size: 49152,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  rope_scaling: null,
  tie_word_embeddings: true,
  attention_bias: false,
  mlp_bias: false,
  hidden_act: 'silu',
  bos_token_id: 0,
  eos_token_id: 0,
  torch_dtype: 'bfloat16',
} as const;

export interface LlmBenchOptions {
  /** Transformer blocks (SmolLM2-135M has 30). */
  layers: number;
  /** Prompt tokens prefilled in one pass. */
  promptTokens: number;
  /** New tokens generated greedily (the first from the prefill, the rest one decode step each). */
  decodeTokens: number;
  /** Timed repetitions of each measurement (the median is reported). */
  reps: number;
  /** LoRA rank of the SFT step (attention and MLP projections). */
  loraRank: number;
  /** Tokens in the SFT step's one sequence. */
  trainTokens: number;
}

export const LLM_DEFAULTS: LlmBenchOptions = { layers: 30, promptTokens: 128, decodeTokens: 32, reps: 3, loraRank: 8, trainTokens: 256 };

/** The command-line name of each option (`npm run bench -- --suite llm --layers 2`). */
export const LLM_FLAGS: Record<keyof LlmBenchOptions, string> = {
  layers: 'layers',
  promptTokens: 'prompt-tokens',
  decodeTokens: 'decode-tokens',
  reps: 'reps',
  loraRank: 'lora-rank',
  trainTokens: 'train-tokens',
};

/** Options from the command line's strings (absent ones take LLM_DEFAULTS); an error names the flag and what it got. */
export function parseLlmOptions(raw: Partial<Record<string, string | undefined>>): LlmBenchOptions {
  const out = { ...LLM_DEFAULTS };
  for (const [key, flag] of Object.entries(LLM_FLAGS) as [keyof LlmBenchOptions, string][]) {
    const v = raw[flag];
    if (v === undefined) continue;
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1) throw new RangeError(`bench --${flag}: must be a positive whole number, got '${v}'`);
    out[key] = n;
  }
  if (out.layers > SMOLLM2_135M_CONFIG.num_hidden_layers)
    throw new RangeError(`bench --layers: SmolLM2-135M has ${SMOLLM2_135M_CONFIG.num_hidden_layers} layers, got ${out.layers}`);
  if (out.decodeTokens < 2)
    throw new RangeError(`bench --decode-tokens: at least 2 (the first comes from the prefill, decode speed from the rest), got ${out.decodeTokens}`);
  if (out.promptTokens + out.decodeTokens > SMOLLM2_135M_CONFIG.max_position_embeddings)
    throw new RangeError(`bench --prompt-tokens + --decode-tokens: at most ${SMOLLM2_135M_CONFIG.max_position_embeddings} (the model's context)`);
  return out;
}

export interface LlmShape {
  /** config.json of the model run (SmolLM2-135M's, with num_hidden_layers as asked). */
  hfConfig: Record<string, unknown>;
  config: ModelConfig;
  /** Parameters of the model run (tied embeddings counted once). */
  parameters: number;
  /** The records' case: the shape and the work, e.g. 'smollm2-135m p128 n32' or 'smollm2-135m-L2of30 p16 n8'. */
  caseName: string;
  /** One line for the log: what ran. */
  description: string;
}

export function llmShape(o: LlmBenchOptions): LlmShape {
  const full = o.layers === SMOLLM2_135M_CONFIG.num_hidden_layers;
  const hfConfig: Record<string, unknown> = { ...SMOLLM2_135M_CONFIG, num_hidden_layers: o.layers };
  const config = configFromHf(hfConfig).config;
  const parameters = paramLayout(config).tensors.reduce((n, t) => n + t.size, 0);
  const model = full ? 'smollm2-135m' : `smollm2-135m-L${o.layers}of${SMOLLM2_135M_CONFIG.num_hidden_layers}`;
  const caseName = `${model} p${o.promptTokens} n${o.decodeTokens}`;
  const c = SMOLLM2_135M_CONFIG;
  const description =
    `SmolLM2-135M shape${full ? '' : ` cut to ${o.layers} of ${c.num_hidden_layers} layers`} (Llama, hidden ${c.hidden_size}, ${o.layers} layers, ${c.num_attention_heads} heads, ${c.num_key_value_heads} KV heads, ` +
    `intermediate ${c.intermediate_size}, vocab ${c.vocab_size}, tied embeddings, rope_theta ${c.rope_theta}), ${(parameters / 1e6).toFixed(1)}M random f32 parameters (block matrices at ${BLOCK_SCALE}× GPT-2's init std); ` +
    `prompt ${o.promptTokens} tokens, ${o.decodeTokens} greedy new tokens, median of ${o.reps}; LoRA r ${o.loraRank} SFT step on 1 × ${o.trainTokens} tokens`;
  return { hfConfig, config, parameters, caseName, description };
}

/** How much larger than GPT-2's init (std 0.02) the blocks' matrices are drawn; see llmParams. */
export const BLOCK_SCALE = 4;

/**
 * The random weights every engine runs: initParams (seed 0) with the blocks' matrices scaled by
 * BLOCK_SCALE. At GPT-2's std the blocks barely move the residual stream, so the tied head echoes
 * the last token forever and every engine "agrees" on one repeated id; at 4× the greedy
 * continuation moves between tokens and the agreement column tests the arithmetic. Speed does not
 * depend on the values.
 */
export function llmParams(config: ModelConfig): Float32Array {
  const layout = paramLayout(config);
  const p = initParams(config, 0, layout);
  for (const t of layout.tensors) {
    if (t.kind === 'norm' || t.kind === 'bias' || t.name === 'wte' || t.name === 'lm_head.weight') continue;
    for (let i = t.offset; i < t.offset + t.size; i++) p[i] *= BLOCK_SCALE;
  }
  return p;
}

/** What one engine measured: prefill of the prompt, then decode steps; the greedy tokens it chose. */
export interface EngineMeasurement {
  engine: string;
  /** Median ms of the prefill (the prompt's forward pass and the first token's choice). */
  prefillMs: number;
  /** Median ms of one decode step (one token's forward with the KV cache and its choice). */
  decodeMs: number;
  tokens: number[];
}

/** How far two greedy continuations agree: tokens equal before the first difference (after it, the contexts differ). */
export function greedyAgreement(ours: readonly number[], theirs: readonly number[]): { same: number; of: number; firstDiff: number | null } {
  const of = Math.min(ours.length, theirs.length);
  let same = 0;
  while (same < of && ours[same] === theirs[same]) same++;
  return { same, of, firstDiff: same < of ? same : null };
}

/** Our engine's name in the records: bench.mjs's ratios divide every `lwm*` engine by each peer. */
export const OURS = 'lwm-wgsl';

/** What the suite measured, as bench.mjs stores it: tokens/s per engine, greedy agreement with ours per peer, the LoRA step. */
export function llmRecords(
  caseName: string,
  promptTokens: number,
  engines: readonly EngineMeasurement[],
  failures: readonly { engine: string; message: string }[],
  lora: { stepMs: number; tokens: number } | null,
): BenchRecord[] {
  const out: BenchRecord[] = [];
  const rec = (engine: string, metric: string, value: number, unit: string) => out.push({ suite: 'llm', case: caseName, engine, metric, value, unit });
  const ours = engines.find((e) => e.engine === OURS);
  for (const e of engines) {
    rec(e.engine, 'prefill_tokens_per_s', promptTokens / (e.prefillMs / 1000), 'tokens/s');
    rec(e.engine, 'decode_tokens_per_s', 1000 / e.decodeMs, 'tokens/s');
    if (ours && e !== ours) {
      const a = greedyAgreement(ours.tokens, e.tokens);
      rec(e.engine, 'greedy_tokens_equal', a.same, `of ${a.of} (new tokens equal to ${OURS}'s before the first difference)`);
    }
  }
  for (const f of failures) rec(f.engine, 'error', NaN, f.message.slice(0, 200));
  if (lora) {
    rec(`${OURS}-lora`, 'lora_sft_step_ms', lora.stepMs, 'ms');
    rec(`${OURS}-lora`, 'lora_sft_tokens_per_s', lora.tokens / (lora.stepMs / 1000), 'tokens/s');
  }
  return out;
}

function textTable(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

const num = (v: number | undefined, digits: number) => (v === undefined || !Number.isFinite(v) ? 'n/a' : v.toFixed(digits));

/** The suite's summary: one row per engine, with ours ÷ that engine for prefill and decode and its greedy agreement with ours. */
export function llmTable(records: readonly BenchRecord[]): string {
  const engines = [...new Set(records.filter((r) => r.metric.endsWith('tokens_per_s') && !r.metric.startsWith('lora')).map((r) => r.engine))];
  const get = (engine: string, metric: string) => records.find((r) => r.engine === engine && r.metric === metric)?.value;
  const rows = [['engine', 'prefill tok/s', 'decode tok/s', 'decode ms/token', `${OURS} ÷ it, prefill`, `${OURS} ÷ it, decode`, `greedy = ${OURS}`]];
  for (const e of engines) {
    const [p, d] = [get(e, 'prefill_tokens_per_s'), get(e, 'decode_tokens_per_s')];
    const [op, od] = [get(OURS, 'prefill_tokens_per_s'), get(OURS, 'decode_tokens_per_s')];
    const agree = records.find((r) => r.engine === e && r.metric === 'greedy_tokens_equal');
    const ratio = (a?: number, b?: number) => (e === OURS || a === undefined || b === undefined ? '' : `${num(a / b, 2)}×`);
    const agreeText = agree ? `${agree.value}/${/^of (\d+)/.exec(agree.unit)?.[1] ?? '?'}` : '';
    rows.push([e, num(p, 1), num(d, 2), d ? num(1000 / d, 1) : 'n/a', ratio(op, p), ratio(od, d), agreeText]);
  }
  for (const r of records.filter((x) => x.metric === 'error')) rows.push([r.engine, 'failed', '', '', '', '', r.unit.slice(0, 100)]);
  const step = get(`${OURS}-lora`, 'lora_sft_step_ms');
  const lora = step === undefined ? '' : `\nLoRA SFT step (${OURS}): ${num(step, 0)} ms, ${num(get(`${OURS}-lora`, 'lora_sft_tokens_per_s'), 1)} tokens/s`;
  return textTable(rows) + lora;
}
