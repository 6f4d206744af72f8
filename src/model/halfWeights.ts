// f16 weight storage for inference (and a frozen LoRA base): the matrices of a model — the token
// embedding, the blocks' projections and an untied LM head — held on the GPU in f16, packed two
// per u32 word with each row padded to an even length (src/reference/f16.ts), and read by the
// matmul_f16b and embed_forward_f16 kernels with unpack2x16float, a core WGSL builtin: no
// shader-f16 extension is needed, so this halves the weights' memory and the bytes a decode step
// reads on every adapter, products and sums staying f32. Norm gains, biases and learned positions
// stay f32 (they are small and a kernel adds them as they are).
//
// The device layout is the params.ts layout with every such matrix re-sized to its packed words
// and the offsets recomputed (each still a multiple of PARAM_ALIGN words, so any tensor can be
// bound on its own); shards.ts cuts that layout into bindings exactly as it cuts an f32 one (its
// units are 4-byte words either way), so a matrix larger than one binding is split by rows of
// packed words and a pair never straddles two pieces. The host keeps the params.ts layout in f32
// (checkpoints, exports); packWeights / unpackWeights convert at upload and read-back.
import { packedWords, packF16Rows, unpackF16Rows } from '../reference/f16.ts';
import { PARAM_ALIGN, type ParamLayout, type ParamTensor } from '../core/model/params.ts';

/** How the weights are held on the GPU: f32 (always available, the default) or f16 (half the memory, f32 accumulation). */
export type WeightStorage = 'f32' | 'f16';

/** Bytes the parameters take on the GPU per stored weight. */
export function weightStorageBytes(w: WeightStorage): 2 | 4 {
  return w === 'f16' ? 2 : 4;
}

/** Whether `t` is stored f16 under f16 storage: every matrix but the learned positions (norms, biases and wpe stay f32). */
export function halfStored(t: ParamTensor): boolean {
  return t.shape.length === 2 && t.name !== 'wpe';
}

/** The words `t` takes on the device under f16 storage. */
function deviceWords(t: ParamTensor): number {
  return halfStored(t) ? packedWords(t.shape[0], t.size / t.shape[0]) : t.size;
}

/**
 * `layout` as the GPU holds it with f16 weights: the same tensors in the same order, each matrix
 * `size` its packed u32 words (shape stays the logical one), offsets in words. The result is a
 * ParamLayout whose units are words; only the shard plan and the upload read it.
 */
export function halfDeviceLayout(layout: ParamLayout): ParamLayout {
  let cursor = 0;
  const byName = new Map<string, ParamTensor>();
  const tensors = layout.tensors.map((t) => {
    const d = { ...t, offset: cursor, size: deviceWords(t) };
    cursor = Math.ceil((cursor + d.size) / PARAM_ALIGN) * PARAM_ALIGN;
    byName.set(d.name, d);
    return d;
  });
  const get = (t: ParamTensor | undefined) => (t ? byName.get(t.name)! : undefined);
  return {
    ...layout,
    tensors,
    byName,
    totalSize: cursor,
    decaySegments: [],
    wte: get(layout.wte)!,
    wpe: get(layout.wpe),
    lnFWeight: get(layout.lnFWeight)!,
    lnFBias: get(layout.lnFBias),
    lmHead: get(layout.lmHead),
    blocks: layout.blocks.map((b) => Object.fromEntries(Object.entries(b).map(([k, t]) => [k, get(t as ParamTensor)])) as unknown as typeof b),
  };
}

/** The device words of `flat` (the params.ts layout `host`, f32) laid out as `device` (halfDeviceLayout(host)). */
export function packWeights(host: ParamLayout, device: ParamLayout, flat: Float32Array): Uint32Array {
  if (flat.length !== host.totalSize) throw new RangeError(`parameters hold ${flat.length} elements, the layout needs ${host.totalSize}`);
  const words = new Uint32Array(device.totalSize);
  const f32 = new Float32Array(words.buffer);
  for (const t of host.tensors) {
    const d = device.byName.get(t.name)!;
    if (halfStored(t)) packF16Rows(flat, t.shape[0], t.size / t.shape[0], t.offset, words, d.offset);
    else f32.set(flat.subarray(t.offset, t.offset + t.size), d.offset);
  }
  return words;
}

/** The params.ts layout back from device words: the f16 matrices as the f32 values they round to. */
export function unpackWeights(host: ParamLayout, device: ParamLayout, words: Uint32Array): Float32Array {
  const flat = new Float32Array(host.totalSize);
  const f32 = new Float32Array(words.buffer, words.byteOffset, words.length);
  for (const t of host.tensors) {
    const d = device.byName.get(t.name)!;
    if (halfStored(t)) flat.set(unpackF16Rows(words, t.shape[0], t.size / t.shape[0], d.offset), t.offset);
    else flat.set(f32.subarray(d.offset, d.offset + t.size), t.offset);
  }
  return flat;
}
