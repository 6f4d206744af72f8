import { describe, expect, it } from 'vitest';
import { PRESETS, type ModelConfig } from './config.ts';
import { initParams } from './init.ts';
import { paramLayout } from './params.ts';
import { CheckpointError, loadCheckpoint, saveCheckpoint, type Checkpoint } from './checkpoint.ts';
import { SafetensorsError, f16ToF32, readSafetensors, tensorToF32, writeSafetensors } from './safetensors.ts';

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
    expect(names.slice(0, 3)).toEqual(['wte', 'wpe', 'h.0.ln_1.weight']);
    expect(names).toContain('h.1.attn.c_attn.weight');
    expect(names).toContain('optimizer.m.h.1.mlp.c_proj.weight');
    expect(names[names.length - 1]).toBe('optimizer.step');
    expect(JSON.parse(f.metadata.config)).toEqual(PRESETS.micro);
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
      /tensor 'wpe' has shape \[64, 32\] in the checkpoint, the model expects \[32, 32\]/,
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
    const future = writeSafetensors([], { format: 'lwm-studio-checkpoint/2' });
    expect(() => loadCheckpoint(future, { source: 'next.safetensors' })).toThrow(/next\.safetensors: format 'lwm-studio-checkpoint\/2'/);
  });
});
