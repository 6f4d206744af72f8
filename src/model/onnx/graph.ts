// A small builder for ONNX graphs over onnx-proto (the ONNX protobuf schema as protobufjs
// classes): nodes with generated, unique output names, typed attributes, initializers from typed
// arrays, and the model's bytes, with the weights either inside the file or, for a model beyond
// protobuf's 2 GB message limit, in an external-data file beside it (ONNX's `location` /
// `offset` / `length` entries, which onnxruntime and onnxruntime-web read).
import onnxProto from 'onnx-proto';

export const { onnx } = onnxProto;
export type NodeProto = onnxProto.onnx.INodeProto;
export type TensorProto = onnxProto.onnx.ITensorProto;
export type ValueInfoProto = onnxProto.onnx.IValueInfoProto;
export type ModelProto = onnxProto.onnx.IModelProto;

export const DataType = { FLOAT: 1, INT64: 7, BOOL: 9, FLOAT16: 10 } as const;

/** The opset the graphs are written for (LayerNormalization, Softmax over one axis, Range, LessOrEqual). */
export const OPSET = 17;
/** ONNX IR version 8 goes with opset 17 (ONNX 1.12). */
export const IR_VERSION = 8;

export type Attr = { int: number } | { float: number } | { ints: number[] };

function attribute(name: string, a: Attr): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ('int' in a) return { name, type: T.INT, i: a.int };
  if ('float' in a) return { name, type: T.FLOAT, f: a.float };
  return { name, type: T.INTS, ints: a.ints };
}

/** A dimension: a number, or a symbolic name (dim_param) such as 'batch_size'. */
export type Dim = number | string;

export function valueInfo(name: string, elemType: number, dims: Dim[]): ValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: { name: string; dims: number[]; dataType: number; bytes: Uint8Array }[] = [];
  private readonly used = new Set<string>();
  private counter = 0;

  /** A fresh value name starting with `hint`. */
  fresh(hint: string): string {
    let name = hint;
    while (this.used.has(name)) name = `${hint}_${++this.counter}`;
    this.used.add(name);
    return name;
  }

  /** One node; returns its output names (`outputs` fixes them, otherwise they are generated from the op's name). */
  nodeN(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, outputs: number | string[] = 1, hint = opType): string[] {
    const names =
      typeof outputs === 'number'
        ? Array.from({ length: outputs }, (_, i) => this.fresh(`/${hint}${outputs > 1 ? `_${i}` : ''}`))
        : outputs.map((o) => (this.used.add(o), o));
    this.nodes.push({
      opType,
      input: inputs,
      output: names,
      name: this.fresh(`${hint}_node`),
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return names;
  }

  /** One node with one output. */
  node(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string, hint = opType): string {
    return this.nodeN(opType, inputs, attrs, output === undefined ? 1 : [output], hint)[0];
  }

  /** A float initializer (weights, or a constant). */
  float(name: string, dims: number[], data: Float32Array): string {
    if (data.length !== dims.reduce((a, b) => a * b, 1)) throw new RangeError(`initializer ${name}: ${data.length} values for dims [${dims.join(', ')}]`);
    const n = this.fresh(name);
    this.initializers.push({ name: n, dims, dataType: DataType.FLOAT, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return n;
  }

  /** An int64 initializer (shapes, axes, indices); a scalar when `dims` is []. */
  int64(name: string, values: number[], dims: number[] = [values.length]): string {
    const n = this.fresh(name);
    const data = BigInt64Array.from(values, (v) => BigInt(v));
    this.initializers.push({ name: n, dims, dataType: DataType.INT64, bytes: new Uint8Array(data.buffer) });
    return n;
  }

  /** A float scalar constant. */
  scalar(name: string, v: number): string {
    return this.float(name, [], new Float32Array([v]));
  }

  /** Bytes the initializers hold. */
  get weightBytes(): number {
    return this.initializers.reduce((a, t) => a + t.bytes.byteLength, 0);
  }
}

/** Protobuf messages cannot exceed 2 GiB; a model whose weights come near it keeps them outside. */
export const EXTERNAL_DATA_THRESHOLD = 2 ** 31 - 2 ** 26;
/** Offsets in the external-data file are aligned like `onnx.save_model(..., save_as_external_data=True)` does. */
const EXTERNAL_ALIGN = 4096;

export interface ModelBytes {
  model: Uint8Array;
  /** The external-data file's bytes, named `${model file}_data` beside it; absent when the weights are inside. */
  externalData?: Uint8Array;
}

export interface SerializeOptions {
  graphName: string;
  inputs: ValueInfoProto[];
  outputs: ValueInfoProto[];
  /** The external-data file's name, as written in the graph (e.g. 'model.onnx_data'). */
  externalDataName: string;
  /** Keep the weights outside the model file when they take more bytes than this (default EXTERNAL_DATA_THRESHOLD). */
  externalThreshold?: number;
  metadata?: Record<string, string>;
}

/** The model file (and, for large weights, its external-data file). */
export function serializeModel(g: GraphBuilder, o: SerializeOptions): ModelBytes {
  const external = g.weightBytes > (o.externalThreshold ?? EXTERNAL_DATA_THRESHOLD);
  let offset = 0;
  const placed: { at: number; bytes: Uint8Array }[] = [];
  const initializer: TensorProto[] = g.initializers.map((t) => {
    const base = { name: t.name, dims: t.dims, dataType: t.dataType };
    // Small tensors (shapes, axes, scalars) stay inside: onnxruntime needs some of them at load time.
    if (!external || t.bytes.byteLength < 1024) return { ...base, rawData: t.bytes };
    offset = Math.ceil(offset / EXTERNAL_ALIGN) * EXTERNAL_ALIGN;
    placed.push({ at: offset, bytes: t.bytes });
    const entry = [
      { key: 'location', value: o.externalDataName },
      { key: 'offset', value: String(offset) },
      { key: 'length', value: String(t.bytes.byteLength) },
    ];
    offset += t.bytes.byteLength;
    return { ...base, dataLocation: onnx.TensorProto.DataLocation.EXTERNAL, externalData: entry };
  });
  const graph: onnxProto.onnx.IGraphProto = { name: o.graphName, node: g.nodes, initializer, input: o.inputs, output: o.outputs };
  const model: ModelProto = {
    irVersion: IR_VERSION,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: 'LWM Studio',
    graph,
    metadataProps: Object.entries(o.metadata ?? {}).map(([key, value]) => ({ key, value })),
  };
  const bytes = onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  if (!external) return { model: bytes };
  const data = new Uint8Array(offset);
  for (const p of placed) data.set(p.bytes, p.at);
  return { model: bytes, externalData: data };
}

/** Decodes a model file (tests and the layout check read graphs back). */
export function decodeModel(bytes: Uint8Array): onnxProto.onnx.ModelProto & { graph: onnxProto.onnx.GraphProto } {
  const m = onnx.ModelProto.decode(bytes);
  if (!m.graph) throw new RangeError('the ONNX model has no graph');
  return m as onnxProto.onnx.ModelProto & { graph: onnxProto.onnx.GraphProto };
}
