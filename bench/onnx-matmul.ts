// A one-node ONNX model, Y = MatMul(A, B), encoded by hand (protobuf wire format) so the
// benchmark needs no model file and no ONNX tooling. Field numbers from onnx.proto3.

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

const enc = new TextEncoder();
const tagVarint = (field: number, v: number) => [...varint(field << 3), ...varint(v)];
const tagBytes = (field: number, bytes: number[]) => [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
const tagString = (field: number, s: string) => tagBytes(field, Array.from(enc.encode(s)));

function tensorValueInfo(name: string, dims: number[]): number[] {
  const shape = dims.flatMap((d) => tagBytes(1, tagVarint(1, d))); // TensorShapeProto.dim{dim_value}
  const tensorType = [...tagVarint(1, 1 /* FLOAT */), ...tagBytes(2, shape)];
  const typeProto = tagBytes(1, tensorType); // TypeProto.tensor_type
  return [...tagString(1, name), ...tagBytes(2, typeProto)];
}

export function matmulOnnxModel(M: number, N: number, K: number): Uint8Array {
  const node = [...tagString(1, 'A'), ...tagString(1, 'B'), ...tagString(2, 'Y'), ...tagString(3, 'mm'), ...tagString(4, 'MatMul')];
  const graph = [
    ...tagBytes(1, node),
    ...tagString(2, 'matmul'),
    ...tagBytes(11, tensorValueInfo('A', [M, K])),
    ...tagBytes(11, tensorValueInfo('B', [K, N])),
    ...tagBytes(12, tensorValueInfo('Y', [M, N])),
  ];
  const model = [
    ...tagVarint(1, 8), // ir_version
    ...tagString(2, 'lwm-studio-bench'),
    ...tagBytes(7, graph),
    ...tagBytes(8, [...tagString(1, ''), ...tagVarint(2, 13)]), // opset_import: default domain, opset 13
  ];
  return new Uint8Array(model);
}
