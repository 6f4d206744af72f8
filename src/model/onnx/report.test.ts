// What scripts/fixtures/onnx_export_check.py found when it ran our ONNX exports in Python
// onnxruntime beside transformers (fixtures/onnx_export_check.json): today's export must still be
// those very files (sha256), and the report must say they agreed (logits within 1e-4 with and
// without the KV cache and left-padded, the same greedy tokens).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../core/model/checkpoint.ts';
import { loadTinyModel, TINY_ARCHS } from '../hf/tinyFixtures.ts';
import { decoderModel } from './decoder.ts';

interface Checked {
  max_abs_diff_no_cache: number;
  max_abs_diff_kv_cache: number;
  max_abs_diff_left_padded: number;
  greedy_onnxruntime: number[];
  greedy_transformers: number[];
  onnx_sha256: string;
}
const report = JSON.parse(readFileSync(new URL('./fixtures/onnx_export_check.json', import.meta.url), 'utf8')) as { models: Record<string, Checked> };
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('the ONNX export checked in Python onnxruntime and transformers', () => {
  it.each(Object.keys(report.models))('%s: logits within 1e-4 (no cache, KV cache, left-padded) and the same greedy tokens', (name) => {
    const r = report.models[name];
    expect(Math.max(r.max_abs_diff_no_cache, r.max_abs_diff_kv_cache, r.max_abs_diff_left_padded)).toBeLessThan(1e-4);
    expect(r.greedy_onnxruntime).toEqual(r.greedy_transformers);
    expect(r.greedy_onnxruntime.length).toBeGreaterThan(0);
  });

  it.each(TINY_ARCHS)("%s: today's export is the file that was checked", async (arch) => {
    const m = await loadTinyModel(arch);
    expect(sha(decoderModel(m.hf.config, m.params).model)).toBe(report.models[arch].onnx_sha256);
  });

  it.each(['untied', 'tied'])("GPT-2 %s: today's export is the file that was checked", (name) => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(new URL(`../hf/fixtures/export/${name}.safetensors`, import.meta.url))), { source: name });
    expect(sha(decoderModel(ck.config, ck.params).model)).toBe(report.models[`gpt2-${name}`].onnx_sha256);
  });
});
