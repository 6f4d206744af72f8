import { describe, expect, it } from 'vitest';
import { PRESETS, type ModelConfig } from '../core/model/config.ts';
import { initParams } from './init.ts';
import { paramLayout } from '../core/model/params.ts';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  CheckpointError,
  checkpointFiles,
  joinCheckpointFiles,
  loadCheckpoint,
  optimizerFileName,
  saveCheckpoint,
  type Checkpoint,
} from '../core/model/checkpoint.ts';
import { gptForward } from '../reference/gpt.ts';
import { SafetensorsError, f16ToF32, readSafetensors, tensorToF32, writeSafetensors } from '../core/model/safetensors.ts';

const enc = new TextEncoder();
const same = (a: ArrayBufferView, b: ArrayBufferView) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/** A file from its parts, for malformed-file tests. */
function rawFile(header: string, data: Uint8Array, declaredLen = header.length): Uint8Array {
  const h = enc.encode(header);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setUint32(0, declaredLen, true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

describe('safetensors', () => {
  it('writes the documented layout: u64 length, padded JSON, aligned data', () => {
    const bytes = writeSafetensors(
      [
        { name: 'a', dtype: 'F32', shape: [2], data: new Float32Array([1.5, -2]) },
        { name: 'b', dtype: 'I32', shape: [], data: new Int32Array([-7]) },
      ],
      { who: 'me' },
    );
    const dv = new DataView(bytes.buffer);
    const n = dv.getUint32(0, true);
    expect(dv.getUint32(4, true)).toBe(0);
    expect((8 + n) % 8).toBe(0);
    const header = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    expect(header.trimEnd()).toBe(
      '{"__metadata__":{"who":"me"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"I32","shape":[],"data_offsets":[8,12]}}',
    );
    expect(header.slice(header.trimEnd().length)).toMatch(/^ *$/);
    expect(dv.getFloat32(8 + n, true)).toBe(1.5);
    const f = readSafetensors(bytes);
    expect(f.metadata).toEqual({ who: 'me' });
    expect(Array.from(tensorToF32(f.byName.get('a')!))).toEqual([1.5, -2]);
    expect(Array.from(tensorToF32(f.byName.get('b')!))).toEqual([-7]);
  });

  it('reads F16, BF16 and U32 as f32', () => {
    const data = new Uint8Array([0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x80, 0x3f, 0x00, 0xc1, 5, 0, 0, 0]);
    const f = readSafetensors(
      rawFile(
        '{"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[6,10]},"u":{"dtype":"U32","shape":[1],"data_offsets":[10,14]}}',
        data,
      ),
    );
    expect(Array.from(tensorToF32(f.byName.get('h')!))).toEqual([1, -2, 2 ** -24]);
    expect(Array.from(tensorToF32(f.byName.get('b')!))).toEqual([1, -8]);
    expect(Array.from(tensorToF32(f.byName.get('u')!))).toEqual([5]);
    expect(f16ToF32(0x7c00)).toBe(Infinity);
    expect(f16ToF32(0x3555)).toBeCloseTo(1 / 3, 3);
  });

  it('rejects malformed files with a precise reason', () => {
    const ok = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}';
    const bad = (file: Uint8Array, re: RegExp) => {
      expect(() => readSafetensors(file, 'x.safetensors')).toThrow(SafetensorsError);
      expect(() => readSafetensors(file, 'x.safetensors')).toThrow(re);
    };
    bad(new Uint8Array(5), /x\.safetensors: truncated: 5 bytes/);
    bad(rawFile(ok, new Uint8Array(8), 9999), /header length 9999 runs beyond the end of the file/);
    bad(rawFile(ok, new Uint8Array(4)), /data_offsets \[0, 8\] run past the data region \(4 bytes\)/);
    bad(rawFile(ok, new Uint8Array(12)), /4 bytes after the last tensor belong to no tensor/);
    bad(rawFile('{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}}', new Uint8Array(8)), /tensor 'a': unknown dtype "Q4"/);
    bad(rawFile('{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', new Uint8Array(8)), /shape \[3\] needs 12 bytes/);
    bad(
      rawFile('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', new Uint8Array(8)),
      /tensor 'b' \[4, 8\) overlaps tensor 'a' \[0, 8\)/,
    );
    bad(rawFile('{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', new Uint8Array(8)), /bytes \[0, 4\) of the data region belong to no tensor/);
    bad(rawFile('{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}', new Uint8Array(8)), /end before they begin/);
    bad(rawFile('{"a":', new Uint8Array(0)), /not valid JSON/);
    bad(rawFile('[1]', new Uint8Array(0)), /must start with '\{'/);
    bad(rawFile('{"__metadata__":{"k":1}}', new Uint8Array(0)), /__metadata__\.k must be a string/);
  });
});

function checkpointOf(config: ModelConfig, withOptimizer: boolean): Checkpoint {
  const L = paramLayout(config);
  const ck: Checkpoint = { config, params: initParams(config, 3, L), step: 42, tokenizer: { id: 'bytes', hash: 'abc123' } };
  if (withOptimizer) {
    const m = initParams(config, 4, L);
    const v = initParams(config, 5, L).map((x) => x * x);
    ck.optimizer = { m, v, step: 41 };
  }
  ck.extraMetadata = { stage: 'sft', dataset: 'terminal' };
  return ck;
}

describe('checkpoint', () => {
  for (const opt of [false, true]) {
    it(`round-trips byte-exactly (optimizer state: ${opt})`, () => {
      const ck = checkpointOf({ ...PRESETS.micro, tiedEmbeddings: !opt, norm: opt ? 'rmsnorm' : 'layernorm' }, opt);
      const a = saveCheckpoint(ck);
      const loaded = loadCheckpoint(a, { config: ck.config });
      const b = saveCheckpoint(loaded);
      expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
      expect(loaded.step).toBe(42);
      expect(loaded.tokenizer).toEqual({ id: 'bytes', hash: 'abc123' });
      expect(loaded.extraMetadata).toEqual({ dataset: 'terminal', stage: 'sft' });
      expect(same(loaded.params, ck.params)).toBe(true);
      if (opt) {
        expect(loaded.optimizer!.step).toBe(41);
        expect(same(loaded.optimizer!.v, ck.optimizer!.v)).toBe(true);
        expect(same(loaded.optimizer!.m, ck.optimizer!.m)).toBe(true);
      } else expect(loaded.optimizer).toBeUndefined();
    });
  }

  it('documents its tensor names in the file', () => {
    const f = readSafetensors(saveCheckpoint(checkpointOf(PRESETS.micro, true)));
    const names = f.tensors.map((t) => t.name);
    // GPT-2's (Hugging Face GPT2Model's) names, embeddings included.
    expect(names.slice(0, 3)).toEqual(['wte.weight', 'wpe.weight', 'h.0.ln_1.weight']);
    expect(names).toContain('h.1.attn.c_attn.weight');
    expect(names).toContain('optimizer.m.h.1.mlp.c_proj.weight');
    expect(names).toContain('optimizer.v.wte.weight');
    expect(names[names.length - 1]).toBe('optimizer.step');
    expect(JSON.parse(f.metadata.config)).toEqual(PRESETS.micro);
    // transformers loads only files whose format is "pt"; our own tag has its own key.
    expect(f.metadata.format).toBe('pt');
    expect(f.metadata.lwm_format).toBe('lwm-studio-checkpoint/2');
  });

  it('gives users the weights and the optimizer state as two files, and joins them to resume', () => {
    const ck = checkpointOf(PRESETS.micro, true);
    const bundle = saveCheckpoint(ck);
    const files = checkpointFiles(bundle);
    // The weights file is byte for byte a checkpoint without optimizer state: nothing else in it.
    expect(Buffer.from(files.weights).equals(Buffer.from(saveCheckpoint({ ...ck, optimizer: undefined })))).toBe(true);
    const w = readSafetensors(files.weights);
    expect(w.tensors.some((t) => t.name.startsWith('optimizer.'))).toBe(false);
    const o = readSafetensors(files.optimizer!);
    expect(o.metadata).toEqual({ format: 'pt', lwm_format: 'lwm-studio-optimizer/2', config: w.metadata.config, step: '42' });
    expect(o.tensors.every((t) => t.name.startsWith('optimizer.'))).toBe(true);
    // Resume: the two files give back the exact buffer, so the optimizer moments and step return.
    expect(Buffer.from(joinCheckpointFiles(files)).equals(Buffer.from(bundle))).toBe(true);
    const resumed = loadCheckpoint(joinCheckpointFiles(files), { config: PRESETS.micro });
    expect(resumed.optimizer!.step).toBe(41);
    expect(same(resumed.optimizer!.m, ck.optimizer!.m)).toBe(true);
    expect(same(resumed.optimizer!.v, ck.optimizer!.v)).toBe(true);
    // The weights alone load (a new stage starts there) and carry no optimizer state.
    expect(loadCheckpoint(files.weights).optimizer).toBeUndefined();
    expect(checkpointFiles(files.weights)).toEqual({ weights: files.weights });
    expect(joinCheckpointFiles({ weights: files.weights })).toBe(files.weights);
    expect(optimizerFileName('runs/sft.safetensors')).toBe('runs/sft.optim.safetensors');
    expect(optimizerFileName('sft.best.safetensors')).toBe('sft.best.optim.safetensors');
    // Wrong pairings are refused: the optimizer file alone, a stale one, one of another model.
    expect(() => loadCheckpoint(files.optimizer!, { source: 'x.optim.safetensors' })).toThrow(/x\.optim\.safetensors: is an optimizer state file/);
    const stale = checkpointFiles(saveCheckpoint({ ...ck, step: 7 })).optimizer!;
    expect(() => joinCheckpointFiles({ weights: files.weights, optimizer: stale }, 'w.safetensors')).toThrow(/is for step 7 but the weights are at step 42/);
    const other = checkpointFiles(saveCheckpoint(checkpointOf({ ...PRESETS.micro, layers: 1 }, true))).optimizer!;
    expect(() => joinCheckpointFiles({ weights: files.weights, optimizer: other })).toThrow(/another model config/);
    expect(() => joinCheckpointFiles({ weights: files.weights, optimizer: files.weights })).toThrow(/lwm_format is "lwm-studio-checkpoint\/2"/);
  });

  it('still reads files written with the old embedding names and format tag', () => {
    const ck = checkpointOf(PRESETS.micro, true);
    const f = readSafetensors(saveCheckpoint(ck));
    const rename = (n: string) => n.replace(/(^|\.)(wte|wpe)\.weight$/, '$1$2');
    const { lwm_format: _tag, ...meta } = f.metadata;
    const old = writeSafetensors(
      f.tensors.map((t) => ({
        name: rename(t.name),
        dtype: t.dtype as 'F32' | 'I32',
        shape: t.shape,
        data: t.dtype === 'I32' ? new Int32Array([41]) : tensorToF32(t),
      })),
      { ...meta, format: 'lwm-studio-checkpoint/1' },
    );
    expect(
      readSafetensors(old)
        .tensors.map((t) => t.name)
        .slice(0, 2),
    ).toEqual(['wte', 'wpe']);
    const loaded = loadCheckpoint(old, { config: PRESETS.micro });
    expect(same(loaded.params, ck.params)).toBe(true);
    expect(same(loaded.optimizer!.m, ck.optimizer!.m)).toBe(true);
    expect(loaded.extraMetadata).toEqual({ dataset: 'terminal', stage: 'sft' });
    // Saved again, it is in today's layout.
    expect(Buffer.from(saveCheckpoint(loaded)).equals(Buffer.from(saveCheckpoint(ck)))).toBe(true);
  });

  it('reads a GPT-2 saved by transformers (scripts/fixtures/hf_checkpoint.py) and computes its logits', () => {
    const fx = (name: string) => readFileSync(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)));
    const bytes = new Uint8Array(fx('hf-gpt2-tiny.safetensors'));
    const expected = JSON.parse(fx('hf-gpt2-tiny.logits.json').toString('utf8')) as { tokens: number[]; logits: number[] };
    const config: ModelConfig = {
      vocabSize: 16,
      contextLength: 8,
      layers: 2,
      heads: 2,
      dModel: 8,
      mlpRatio: 4,
      norm: 'layernorm',
      positions: 'learned',
      tiedEmbeddings: true,
      normEps: 1e-5,
      ropeBase: 10000,
    };
    expect(readSafetensors(bytes).metadata).toEqual({ format: 'pt' });
    expect(() => loadCheckpoint(bytes)).toThrow(/has no config/);
    const ck = loadCheckpoint(bytes, { config });
    // Older transformers files also carry the blocks' causal-mask buffers: read past them.
    const f = readSafetensors(bytes);
    const withBuffers = writeSafetensors([
      ...f.tensors.map((t) => ({ name: t.name, dtype: 'F32' as const, shape: t.shape, data: tensorToF32(t) })),
      { name: 'transformer.h.0.attn.bias', dtype: 'F32', shape: [1, 1, 8, 8], data: new Float32Array(64).fill(1) },
    ]);
    expect(same(loadCheckpoint(withBuffers, { config }).params, ck.params)).toBe(true);
    const { logits } = gptForward(ck.params, config, expected.tokens, 1, expected.tokens.length);
    expect(logits.length).toBe(expected.logits.length);
    let maxDiff = 0;
    for (let i = 0; i < logits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(logits[i] - expected.logits[i]));
    expect(maxDiff).toBeLessThan(1e-4);
    // The logits are not trivially equal across positions: a misplaced tensor would show.
    expect(Math.abs(expected.logits[0] - expected.logits[16])).toBeGreaterThan(1e-3);
  });

  it('refuses a checkpoint that does not fit the model, naming the field or tensor', () => {
    const bytes = saveCheckpoint(checkpointOf(PRESETS.micro, false));
    expect(() => loadCheckpoint(bytes, { config: { ...PRESETS.micro, dModel: 64 } })).toThrow(
      /does not fit this model: dModel is 32 in the checkpoint but 64 in the model/,
    );
    expect(() => loadCheckpoint(bytes, { config: { ...PRESETS.micro, positions: 'rope' } })).toThrow(/positions is "learned" in the checkpoint/);
    expect(() => loadCheckpoint(bytes, { tokenizer: { id: 'bpe', hash: 'zzz' } })).toThrow(/trained with tokenizer 'bytes'/);

    // A file without config metadata (another tool's export) is checked tensor by tensor.
    const f = readSafetensors(bytes);
    const bare = writeSafetensors(f.tensors.map((t) => ({ name: t.name, dtype: 'F32' as const, shape: t.shape, data: tensorToF32(t) })));
    expect(() => loadCheckpoint(bare)).toThrow(/has no config/);
    expect(same(loadCheckpoint(bare, { config: PRESETS.micro }).params, loadCheckpoint(bytes).params)).toBe(true);
    expect(() => loadCheckpoint(bare, { config: { ...PRESETS.micro, contextLength: 32 } })).toThrow(
      /tensor 'wpe.weight' has shape \[64, 32\] in the checkpoint, the model expects \[32, 32\]/,
    );
    expect(() => loadCheckpoint(bare, { config: { ...PRESETS.micro, tiedEmbeddings: false } })).toThrow(/tensor 'lm_head.weight' \[256, 32\] is missing/);
    expect(() => loadCheckpoint(bare, { config: { ...PRESETS.micro, layers: 1 } })).toThrow(/tensor 'h.1.ln_1.weight' \[32\] is not part of this model/);
    expect(() => loadCheckpoint(bare, { config: PRESETS.micro })).not.toThrow(CheckpointError);

    // PyTorch's save_file tags files {"format": "pt"}: foreign, fine; a future version of ours is not.
    const pt = writeSafetensors(
      f.tensors.map((t) => ({ name: t.name, dtype: 'F32' as const, shape: t.shape, data: tensorToF32(t) })),
      { format: 'pt' },
    );
    expect(loadCheckpoint(pt, { config: PRESETS.micro }).step).toBe(0);
    const future = writeSafetensors([], { format: 'pt', lwm_format: 'lwm-studio-checkpoint/3' });
    expect(() => loadCheckpoint(future, { source: 'next.safetensors' })).toThrow(/next\.safetensors: format 'lwm-studio-checkpoint\/3'/);
  });
});
