// One way to test a kernel against its plain-TypeScript twin (after tinygrad's helper_test_op):
// for each (awkward) shape, make the inputs, run the kernel in a GpuScope that frees every buffer
// and kernel it made, run the twin on the same inputs, and compare each named output with its
// tolerance. It runs on the suite's runtime, so a test file that uses it checks the kernel on
// every runtime the suite has (gpu-node: Dawn, gpu-browser: Chromium).
import { expect } from 'vitest';
import { type Disposable, submit } from '../kernels/common.ts';
import type { GpuRuntime } from '../runtime.ts';
import { expectClose } from './compare.ts';
import { gpuRuntime } from './runtime.ts';

/** [atol, rtol] for expectClose, or 'exact': the same numbers, element for element. */
export type Tolerance = readonly [atol: number, rtol: number] | 'exact';

/** Buffers and kernels a test makes, freed together by dispose() (withScope() calls it). */
export class GpuScope {
  private readonly buffers: GPUBuffer[] = [];
  private readonly owned: Disposable[] = [];
  constructor(readonly rt: GpuRuntime) {}

  /** A storage buffer, filled with `data` or of `bytes` bytes, released with the scope. */
  buffer(label: string, sizeOrData: number | ArrayBufferView): GPUBuffer {
    const b = this.rt.storage(label, sizeOrData);
    this.buffers.push(b);
    return b;
  }

  /** Takes `k` (a kernel, anything with dispose()) to dispose with the scope; returns it. */
  own<T extends Disposable>(k: T): T {
    this.owned.push(k);
    return k;
  }

  /** Awaits `kernel` and owns it: `const k = await g.kernel(AddKernel.create(g.rt, shape))`. */
  async kernel<T extends Disposable>(kernel: Promise<T>): Promise<T> {
    return this.own(await kernel);
  }

  /** One compute pass in one submission. */
  submit(encode: (pass: GPUComputePassEncoder) => void): void {
    submit(this.rt, 'test', encode);
  }

  read(buffer: GPUBuffer, count?: number): Promise<Float32Array> {
    return this.rt.readF32(buffer, count);
  }

  dispose(): void {
    this.rt.release(...this.buffers.splice(0));
    for (const k of this.owned.splice(0).reverse()) k.dispose();
  }
}

/**
 * Runs `body` with a fresh scope and frees what it made, whether it returns or throws. When it
 * returns, the runtime holds as many buffers as before (a kernel that leaks one fails the test).
 */
export async function withScope<T>(rt: GpuRuntime, body: (g: GpuScope) => Promise<T>): Promise<T> {
  const before = rt.stats().live;
  const g = new GpuScope(rt);
  let result: T;
  try {
    result = await body(g);
  } finally {
    g.dispose();
  }
  expect(rt.stats().live, 'buffers left behind').toBe(before);
  return result;
}

/** Outputs by name: what the kernel read back, or what the twin computed. */
export type Outputs = Record<string, ArrayLike<number>>;

export interface OpCheck<S, I> {
  /** The inputs of one shape (seeded, so a failure reproduces), given to both sides. */
  inputs(shape: S): I;
  /** Runs the kernel in a scope that frees what it makes; returns its outputs, read back. */
  gpu(g: GpuScope, inputs: I, shape: S): Promise<Outputs>;
  /** The twin's outputs, by the same names. */
  twin(inputs: I, shape: S): Outputs;
  /** A tolerance for every output. */
  tol: Record<string, Tolerance>;
  /** How a shape is named in failures (default: its JSON). */
  name?(shape: S): string;
  /** The runtime to run on (default: the suite's, gpuRuntime()); e.g. withGridLimit(rt, 5). */
  runtime?: GpuRuntime;
}

/** Checks the kernel against its twin on every shape, output by output, and that it frees what it allocates. */
export async function checkOp<S, I>(shapes: readonly S[], op: OpCheck<S, I>): Promise<void> {
  const rt = op.runtime ?? (await gpuRuntime());
  for (const shape of shapes) {
    const label = op.name?.(shape) ?? JSON.stringify(shape);
    const inputs = op.inputs(shape);
    const got = await withScope(rt, (g) => op.gpu(g, inputs, shape));
    const want = op.twin(inputs, shape);
    expect(Object.keys(got).sort(), `outputs of ${label}`).toEqual(Object.keys(want).sort());
    for (const [name, w] of Object.entries(want)) expectOutput(got[name], w, op.tol[name], `${name} ${label}`);
  }
}

/** One output against the twin's: exactly, or within expectClose's tolerance. */
export function expectOutput(got: ArrayLike<number>, want: ArrayLike<number>, tol: Tolerance | undefined, what: string): void {
  if (tol === undefined) throw new Error(`checkOp: no tolerance for ${what}`);
  if (tol === 'exact') expect(Array.from(got), what).toEqual(Array.from(want));
  else expectClose(got, want, tol[0], tol[1], what);
}
