// What makes a folder an ONNX causal-LM folder, and a graph a decoder in Hugging Face's layout
// (what optimum and transformers.js export, and what `lwm export --to onnx` writes):
//
//   folder   onnx/model.onnx (or a variant: model_fp16.onnx, model_q4.onnx, model_quantized.onnx,
//            …; the weights maybe in model.onnx_data beside it), config.json, tokenizer.json,
//            generation_config.json. An .onnx file at the top level is accepted too.
//   inputs   input_ids, attention_mask, [position_ids], past_key_values.N.key / .value for
//            N = 0 … layers − 1, [use_cache_branch] (optimum's merged decoders)
//   outputs  logits, present.N.key / .value
// Pure functions of file and value names, so the app, the CLI and the tests share them.

export class OnnxLayoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OnnxLayoutError';
  }
}

/** The .onnx files of a folder listing: under onnx/, else at the top level. */
export function onnxModelFiles(paths: readonly string[]): string[] {
  const under = paths.filter((p) => /^onnx\/[^/]+\.onnx$/.test(p));
  return under.length ? under : paths.filter((p) => /^[^/]+\.onnx$/.test(p));
}

/** Whether a folder listing holds an ONNX model (the CLI's auto-detection). */
export function isOnnxFolder(paths: readonly string[]): boolean {
  return onnxModelFiles(paths).length > 0;
}

/** Which file a folder runs when no variant is asked for: full precision first, then what onnxruntime-web runs well. */
const PREFERENCE = [
  'model.onnx',
  'decoder_model_merged.onnx',
  'model_fp16.onnx',
  'model_q4f16.onnx',
  'model_q4.onnx',
  'model_quantized.onnx',
  'model_int8.onnx',
  'model_uint8.onnx',
];

/**
 * The model file to load: `variant` names one ('fp16' → model_fp16.onnx, 'q4' → model_q4.onnx,
 * 'fp32' → model.onnx, or a file name); otherwise the first of PREFERENCE the folder has, else
 * its only .onnx file. Throws OnnxLayoutError naming what the folder holds.
 */
export function chooseOnnxFile(paths: readonly string[], label: string, variant?: string): string {
  const files = onnxModelFiles(paths);
  if (!files.length)
    throw new OnnxLayoutError(
      `${label}: has no ONNX model (onnx/*.onnx); an ONNX causal-LM folder keeps its model at onnx/model.onnx beside config.json and tokenizer.json`,
    );
  const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  const names = files.map(base);
  if (variant !== undefined) {
    const wanted = variant.endsWith('.onnx') ? variant : variant === 'fp32' ? 'model.onnx' : `model_${variant}.onnx`;
    const i = names.indexOf(wanted);
    if (i < 0) throw new OnnxLayoutError(`${label}: has no ${wanted} (its ONNX files: ${names.join(', ')})`);
    return files[i];
  }
  for (const name of PREFERENCE) {
    const i = names.indexOf(name);
    if (i >= 0) return files[i];
  }
  if (files.length === 1) return files[0];
  throw new OnnxLayoutError(
    `${label}: holds several ONNX files (${names.join(', ')}) and none is model.onnx; name one (a variant such as fp16 or q4, or the file name)`,
  );
}

export interface DecoderLayout {
  layers: number;
  hasPositionIds: boolean;
  hasUseCacheBranch: boolean;
}

/**
 * Checks a graph's input and output names against the causal-LM layout; throws OnnxLayoutError
 * naming every missing one (an encoder, a model without a KV cache, another naming scheme).
 */
export function checkDecoderLayout(inputs: readonly string[], outputs: readonly string[], label: string): DecoderLayout {
  const layerOf = (names: readonly string[], re: RegExp) =>
    names
      .map((n) => re.exec(n))
      .filter((m) => m !== null)
      .map((m) => Number(m[1]));
  const pastLayers = layerOf(inputs, /^past_key_values\.(\d+)\.(?:key|value)$/);
  const presentLayers = layerOf(outputs, /^present\.(\d+)\.(?:key|value)$/);
  const layers = Math.max(0, ...pastLayers, ...presentLayers) + (pastLayers.length || presentLayers.length ? 1 : 0);
  const missing: string[] = [];
  for (const n of ['input_ids', 'attention_mask']) if (!inputs.includes(n)) missing.push(`input ${n}`);
  if (!outputs.includes('logits')) missing.push('output logits');
  if (!layers) missing.push('inputs past_key_values.N.key / .value and outputs present.N.key / .value (the KV cache)');
  for (let i = 0; i < layers; i++) {
    for (const kind of ['key', 'value']) {
      if (!inputs.includes(`past_key_values.${i}.${kind}`)) missing.push(`input past_key_values.${i}.${kind}`);
      if (!outputs.includes(`present.${i}.${kind}`)) missing.push(`output present.${i}.${kind}`);
    }
  }
  if (missing.length) {
    throw new OnnxLayoutError(
      `${label}: is not a causal-LM decoder in Hugging Face's ONNX layout: missing ${missing.slice(0, 6).join(', ')}${missing.length > 6 ? `, … (${missing.length})` : ''} (its inputs: ${inputs.join(', ') || 'none'}; outputs: ${outputs.join(', ') || 'none'})`,
    );
  }
  return { layers, hasPositionIds: inputs.includes('position_ids'), hasUseCacheBranch: inputs.includes('use_cache_branch') };
}
