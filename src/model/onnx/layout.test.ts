// Which folders are ONNX causal-LM folders, which file of one is run, and the errors that name
// what a graph lacks; which execution providers are tried.
import { describe, expect, it } from 'vitest';
import { checkDecoderLayout, chooseOnnxFile, isOnnxFolder, OnnxLayoutError } from './layout.ts';
import { executionProviders, loadFailure } from './session.ts';

const HUB = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'onnx/model.onnx',
  'onnx/model.onnx_data',
  'onnx/model_fp16.onnx',
  'onnx/model_q4.onnx',
  'onnx/model_quantized.onnx',
];

describe('ONNX folders', () => {
  it('are detected by onnx/*.onnx (or a top-level .onnx), not by safetensors', () => {
    expect(isOnnxFolder(HUB)).toBe(true);
    expect(isOnnxFolder(['config.json', 'model.onnx'])).toBe(true);
    expect(isOnnxFolder(['config.json', 'model.safetensors', 'tokenizer.json'])).toBe(false);
    expect(isOnnxFolder(['onnx/sub/model.onnx'])).toBe(false);
  });

  it('run model.onnx unless a variant is named; a variant that is not there names what is', () => {
    expect(chooseOnnxFile(HUB, 'm')).toBe('onnx/model.onnx');
    expect(chooseOnnxFile(HUB, 'm', 'fp16')).toBe('onnx/model_fp16.onnx');
    expect(chooseOnnxFile(HUB, 'm', 'q4')).toBe('onnx/model_q4.onnx');
    expect(chooseOnnxFile(HUB, 'm', 'fp32')).toBe('onnx/model.onnx');
    expect(chooseOnnxFile(HUB, 'm', 'model_quantized.onnx')).toBe('onnx/model_quantized.onnx');
    expect(chooseOnnxFile(['onnx/model_q4f16.onnx', 'onnx/model_q4.onnx'], 'm')).toBe('onnx/model_q4f16.onnx');
    expect(chooseOnnxFile(['onnx/decoder.onnx'], 'm')).toBe('onnx/decoder.onnx');
    expect(() => chooseOnnxFile(HUB, 'm', 'int8')).toThrow(
      /m: has no model_int8\.onnx \(its ONNX files: model\.onnx, model_fp16\.onnx, model_q4\.onnx, model_quantized\.onnx\)/,
    );
    expect(() => chooseOnnxFile(['config.json', 'model.safetensors'], 'hf')).toThrow(/hf: has no ONNX model \(onnx\/\*\.onnx\)/);
    expect(() => chooseOnnxFile(['onnx/a.onnx', 'onnx/b.onnx'], 'm')).toThrow(/several ONNX files \(a\.onnx, b\.onnx\)/);
  });
});

describe('the decoder layout check', () => {
  const kv = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => [`${prefix}.${i}.key`, `${prefix}.${i}.value`]).flat();

  it('takes optimum / transformers.js decoders, with or without position_ids, merged or not', () => {
    expect(checkDecoderLayout(['input_ids', 'attention_mask', 'position_ids', ...kv(3, 'past_key_values')], ['logits', ...kv(3, 'present')], 'm')).toEqual({
      layers: 3,
      hasPositionIds: true,
      hasUseCacheBranch: false,
    });
    expect(checkDecoderLayout(['input_ids', 'attention_mask', ...kv(2, 'past_key_values'), 'use_cache_branch'], ['logits', ...kv(2, 'present')], 'm')).toEqual({
      layers: 2,
      hasPositionIds: false,
      hasUseCacheBranch: true,
    });
  });

  it('names every missing input and output', () => {
    const err = (inputs: string[], outputs: string[]) => {
      try {
        checkDecoderLayout(inputs, outputs, 'x.onnx');
      } catch (e) {
        expect(e).toBeInstanceOf(OnnxLayoutError);
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(err(['input_ids', 'attention_mask'], ['logits'])).toMatch(
      /^x\.onnx: is not a causal-LM decoder in Hugging Face's ONNX layout: missing inputs past_key_values\.N\.key \/ \.value and outputs present\.N\.key \/ \.value \(the KV cache\)/,
    );
    expect(err(['input_ids', 'past_key_values.0.key', 'past_key_values.1.key', 'past_key_values.1.value'], ['logits', ...kv(2, 'present')])).toMatch(
      /missing input attention_mask, input past_key_values\.0\.value \(its inputs/,
    );
    expect(err(['pixel_values'], ['last_hidden_state'])).toMatch(/missing input input_ids, input attention_mask, output logits/);
  });
});

describe('execution providers', () => {
  it('WebGPU first where the page has it, WASM always as the fallback; WASM only in Node', () => {
    expect(executionProviders('auto', true)).toEqual(['webgpu', 'wasm']);
    expect(executionProviders('auto', false)).toEqual(['wasm']);
    expect(executionProviders('auto')).toEqual(['wasm']);
    expect(executionProviders('wasm', true)).toEqual(['wasm']);
    expect(executionProviders('webgpu', false)).toEqual(['webgpu']);
  });

  it("a refusal without a message (onnxruntime-web's runtime throws a bare number) is said in words", () => {
    expect(loadFailure(new Error('protobuf parsing failed'))).toBe('protobuf parsing failed');
    expect(loadFailure(9340448)).toBe(
      'its WebAssembly runtime stopped without a message (code 9340448), as it does on an operator or data type it cannot run; try another model file of the folder',
    );
    expect(loadFailure('bad')).toBe('bad');
  });
});
