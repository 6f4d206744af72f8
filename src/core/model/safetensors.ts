// The safetensors file format, read and written here (no dependency), because checkpoints must
// move between the browser and the Python trainers users graduate to. Layout of a file:
//
//   [8 bytes]  N, the header length, unsigned 64-bit little-endian
//   [N bytes]  JSON object: { "__metadata__"?: {string: string},
//                             "<name>": { "dtype": "F32", "shape": [..], "data_offsets": [begin, end] }, ... }
//              padded with spaces so that 8 + N is a multiple of 8 (aligned data)
//   [rest]     raw little-endian tensor bytes; offsets are relative to the start of this region
//
// Reading is strict: every way a file can be malformed gets an error saying what and where,
// since a silently misread checkpoint trains garbage. Following the reference implementation,
// tensors must tile the data region exactly (no overlaps, no holes, nothing after the last).

export type Dtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U64' | 'U32' | 'U16' | 'U8' | 'BOOL';

const DTYPE_BYTES: Record<Dtype, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U64: 8,
  U32: 4,
  U16: 2,
  U8: 1,
  BOOL: 1,
};

/** Dtypes we can turn into f32 values. */
const READABLE_DTYPES: readonly Dtype[] = ['F32', 'F16', 'BF16', 'U32', 'I32'];
/** Dtypes we write. */
export type WritableDtype = 'F32' | 'U32' | 'I32';

export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

export interface TensorToWrite {
  name: string;
  dtype: WritableDtype;
  shape: readonly number[];
  /** Elements in row-major order; length must equal the product of `shape`. */
  data: Float32Array | Uint32Array | Int32Array;
}

export interface StoredTensor {
  name: string;
  dtype: Dtype;
  shape: number[];
  /** The tensor's raw little-endian bytes (a view into the file, not a copy). */
  bytes: Uint8Array;
}

export interface SafetensorsFile {
  metadata: Record<string, string>;
  /** In the order of their data (the order they were written). */
  tensors: StoredTensor[];
  byName: Map<string, StoredTensor>;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const MAX_HEADER_BYTES = 100_000_000; // the reference implementation's limit; stops a 2^60 length from allocating

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Serialises tensors (in the order given) and metadata into one safetensors file. */
export function writeSafetensors(tensors: readonly TensorToWrite[], metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== 'string') throw new SafetensorsError(`metadata '${k}' must be a string, got ${typeof v}`);
    }
    header.__metadata__ = metadata;
  }
  let offset = 0;
  for (const t of tensors) {
    if (t.name === '__metadata__') throw new SafetensorsError(`'__metadata__' cannot be a tensor name`);
    if (t.name in header) throw new SafetensorsError(`tensor '${t.name}' is listed twice`);
    const n = elementCount(t.shape);
    if (!t.shape.every((s) => Number.isInteger(s) && s >= 0)) throw new SafetensorsError(`tensor '${t.name}': bad shape [${t.shape.join(', ')}]`);
    if (n !== t.data.length) {
      throw new SafetensorsError(`tensor '${t.name}': shape [${t.shape.join(', ')}] holds ${n} elements but ${t.data.length} were given`);
    }
    const bytes = n * DTYPE_BYTES[t.dtype];
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerLen = Math.ceil((8 + json.length) / 8) * 8 - 8;
  const out = new Uint8Array(8 + headerLen + offset);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, headerLen, true);
  dv.setUint32(4, Math.floor(headerLen / 2 ** 32), true);
  out.set(json, 8);
  out.fill(0x20, 8 + json.length, 8 + headerLen);
  let pos = 8 + headerLen;
  for (const t of tensors) {
    const len = t.data.length * 4;
    if (LITTLE_ENDIAN_HOST) {
      out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, len), pos);
    } else {
      for (let i = 0; i < t.data.length; i++) {
        if (t.dtype === 'F32') dv.setFloat32(pos + 4 * i, t.data[i], true);
        else if (t.dtype === 'U32') dv.setUint32(pos + 4 * i, t.data[i], true);
        else dv.setInt32(pos + 4 * i, t.data[i], true);
      }
    }
    pos += len;
  }
  return out;
}

/** A tensor's entry in a header: where its bytes lie, relative to the start of the data region. */
export interface TensorEntry {
  name: string;
  dtype: Dtype;
  shape: number[];
  begin: number;
  end: number;
}

/** A parsed, validated header: enough to plan a load (names, shapes, dtypes, byte ranges) without the data. */
export interface SafetensorsHeader {
  metadata: Record<string, string>;
  /** Where the data region starts in the file: 8 + the header length. */
  dataStart: number;
  /** In the order of their data. */
  entries: TensorEntry[];
  byName: Map<string, TensorEntry>;
}

function failer(source: string): (msg: string) => never {
  return (msg: string): never => {
    throw new SafetensorsError(`${source}: ${msg}`);
  };
}

/**
 * The header's length N from a file's first 8 bytes, checked against the file's size; the header
 * is then bytes [8, 8 + N). With safetensorsHeader, this reads a large file's header without
 * reading its tensors (a File slice in the browser, a positioned read in Node).
 */
export function safetensorsHeaderLength(first8: Uint8Array, fileSize: number, source = 'safetensors file'): number {
  const fail = failer(source);
  if (fileSize < 8 || first8.length < 8) fail(`truncated: ${Math.min(fileSize, first8.length)} bytes, shorter than the 8-byte header length`);
  const dv = new DataView(first8.buffer, first8.byteOffset, 8);
  const headerLen = dv.getUint32(4, true) * 2 ** 32 + dv.getUint32(0, true);
  if (headerLen > MAX_HEADER_BYTES) fail(`header length ${headerLen} exceeds the ${MAX_HEADER_BYTES}-byte limit (not a safetensors file?)`);
  if (8 + headerLen > fileSize) {
    fail(`header length ${headerLen} runs beyond the end of the file (${fileSize} bytes): truncated or not a safetensors file`);
  }
  return headerLen;
}

function parseHeaderJson(headerBytes: Uint8Array, fail: (msg: string) => never): Record<string, unknown> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    return fail('header is not valid UTF-8');
  }
  if (!text.startsWith('{')) fail(`header must start with '{', got ${JSON.stringify(text.slice(0, 16))}`);
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (e) {
    return fail(`header is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return fail('header must be a JSON object');
  return header as Record<string, unknown>;
}

function parseEntry(name: string, entry: unknown, dataLen: number, fail: (msg: string) => never): TensorEntry {
  const where = `tensor '${name}'`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(`${where}: entry must be an object`);
  const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
  if (typeof dtype !== 'string' || !(dtype in DTYPE_BYTES)) {
    return fail(`${where}: unknown dtype ${JSON.stringify(dtype)} (known: ${Object.keys(DTYPE_BYTES).join(', ')})`);
  }
  if (!Array.isArray(shape) || !shape.every((s) => Number.isSafeInteger(s) && s >= 0)) {
    return fail(`${where}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
    return fail(`${where}: data_offsets must be [begin, end] of non-negative integers, got ${JSON.stringify(offsets)}`);
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end) fail(`${where}: data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataLen) fail(`${where}: data_offsets [${begin}, ${end}] run past the data region (${dataLen} bytes): truncated file?`);
  const want = elementCount(shape) * DTYPE_BYTES[dtype as Dtype];
  if (end - begin !== want) {
    fail(`${where}: ${dtype} shape [${shape.join(', ')}] needs ${want} bytes but data_offsets [${begin}, ${end}] hold ${end - begin}`);
  }
  return { name, dtype: dtype as Dtype, shape: shape as number[], begin, end };
}

/**
 * Parses and validates a header: `headerBytes` are the file's bytes [8, 8 + N) (N from
 * safetensorsHeaderLength) and `fileSize` its whole size, so that the tensors' ranges are checked
 * to tile the data region exactly without reading it.
 */
export function safetensorsHeader(headerBytes: Uint8Array, fileSize: number, source = 'safetensors file'): SafetensorsHeader {
  const fail = failer(source);
  const header = parseHeaderJson(headerBytes, fail);
  const dataStart = 8 + headerBytes.length;
  const dataLen = fileSize - dataStart;
  const metadata: Record<string, string> = {};
  const entries: TensorEntry[] = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail(`__metadata__ must be an object of strings`);
      for (const [k, v] of Object.entries(entry as Record<string, unknown>)) {
        if (typeof v !== 'string') fail(`__metadata__.${k} must be a string, got ${JSON.stringify(v)}`);
        metadata[k] = v as string;
      }
      continue;
    }
    entries.push(parseEntry(name, entry, dataLen, fail));
  }
  // Data order is write order (JSON key order is not: objects list integer-like keys first).
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  for (const [i, s] of entries.entries()) {
    if (s.begin < cursor) {
      const prev = entries[i - 1];
      fail(`tensor '${s.name}' [${s.begin}, ${s.end}) overlaps tensor '${prev.name}' [${prev.begin}, ${prev.end})`);
    }
    if (s.begin > cursor) fail(`bytes [${cursor}, ${s.begin}) of the data region belong to no tensor (before '${s.name}')`);
    cursor = s.end;
  }
  if (cursor !== dataLen) fail(`${dataLen - cursor} bytes after the last tensor belong to no tensor`);
  return { metadata, dataStart, entries, byName: new Map(entries.map((e) => [e.name, e])) };
}

/** Parses and validates a safetensors file; `source` names it in errors (e.g. the file name). */
export function readSafetensors(file: Uint8Array, source = 'safetensors file'): SafetensorsFile {
  const headerLen = safetensorsHeaderLength(file.subarray(0, 8), file.length, source);
  const header = safetensorsHeader(file.subarray(8, 8 + headerLen), file.length, source);
  const tensors: StoredTensor[] = header.entries.map((e) => ({
    name: e.name,
    dtype: e.dtype,
    shape: e.shape,
    bytes: file.subarray(header.dataStart + e.begin, header.dataStart + e.end),
  }));
  return { metadata: header.metadata, tensors, byName: new Map(tensors.map((t) => [t.name, t])) };
}

/**
 * The tensor's values as f32 (F32, F16, BF16 exactly; U32, I32 rounded to the nearest f32);
 * `source` names the file in the error for a dtype that cannot be read.
 */
export function tensorToF32(t: StoredTensor, source?: string): Float32Array {
  const n = elementCount(t.shape);
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  const out = new Float32Array(n);
  switch (t.dtype) {
    case 'F32':
      if (LITTLE_ENDIAN_HOST) out.set(new Float32Array(t.bytes.slice().buffer));
      else for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
      break;
    case 'F16':
      for (let i = 0; i < n; i++) out[i] = f16ToF32(dv.getUint16(2 * i, true));
      break;
    case 'BF16': {
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) u[i] = dv.getUint16(2 * i, true) << 16;
      break;
    }
    case 'U32':
      for (let i = 0; i < n; i++) out[i] = dv.getUint32(4 * i, true);
      break;
    case 'I32':
      for (let i = 0; i < n; i++) out[i] = dv.getInt32(4 * i, true);
      break;
    default:
      throw new SafetensorsError(
        `${source ? `${source}: ` : ''}tensor '${t.name}': dtype ${t.dtype} cannot be read as f32 (readable: ${READABLE_DTYPES.join(', ')})`,
      );
  }
  return out;
}

/** An integer tensor's values (U32 or I32). */
export function tensorToInts(t: StoredTensor): number[] {
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  const n = elementCount(t.shape);
  if (t.dtype === 'U32') return Array.from({ length: n }, (_, i) => dv.getUint32(4 * i, true));
  if (t.dtype === 'I32') return Array.from({ length: n }, (_, i) => dv.getInt32(4 * i, true));
  throw new SafetensorsError(`tensor '${t.name}': expected an integer tensor (U32 or I32), got ${t.dtype}`);
}

/** IEEE half → number (exact: every f16 is representable in f32). */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24; // subnormal (and ±0)
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
