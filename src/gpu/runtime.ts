// The WebGPU runtime: one device, with accounting for every buffer it allocates, a pipeline
// cache, read-back helpers, GPU timing and device-loss handling. Kernel launchers in
// src/gpu/kernels take a GpuRuntime (bind groups and submissions: src/gpu/kernels/common.ts);
// nothing above this layer touches navigator.gpu.
import { DeviceLostError, ShaderCompileError, WEBGPU_HELP, WebGPUUnavailableError, type ShaderMessage } from './errors.ts';
import { sourceLine, type ShaderSource } from './shaders.ts';

export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
  features: { shaderF16: boolean; subgroups: boolean; timestampQuery: boolean };
  /** The limits training depends on, as granted to our device. */
  limits: {
    maxStorageBufferBindingSize: number;
    maxBufferSize: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
    maxComputeWorkgroupSizeX: number;
    maxComputeWorkgroupsPerDimension: number;
    maxStorageBuffersPerShaderStage: number;
  };
}

export interface BufferStats {
  live: number;
  bytes: number;
  peakLive: number;
  peakBytes: number;
  /** Bytes per label prefix (text before the first '.' or ':'), for "where did the memory go". */
  byLabel: Record<string, number>;
}

export interface AcquireOptions {
  /** Defaults to navigator.gpu. Node passes Dawn's GPU (see src/gpu/node.ts). */
  gpu?: GPU;
  powerPreference?: GPUPowerPreference;
  /**
   * Bytes one storage binding may hold at most, below the adapter's own limit: models then split
   * their parameters as they would on a smaller adapter (tests run the split path with tiny models).
   */
  maxBindingBytes?: number;
  /**
   * What to do when no adapter or device can be had, in place of the browsers' list (WEBGPU_HELP):
   * Node passes NODE_WEBGPU_HELP (see src/gpu/node.ts).
   */
  help?: string;
}

const WANTED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

const WANTED_FEATURES: GPUFeatureName[] = ['timestamp-query', 'shader-f16', 'subgroups' as GPUFeatureName];

/** A whole buffer, or a byte range of one (offset a multiple of 256). */
export type BufferBinding = GPUBuffer | { buffer: GPUBuffer; offset: number; size: number };

export type RuntimeEvent = { type: 'lost'; error: DeviceLostError } | { type: 'error'; message: string };

/** Finds navigator.gpu in a page, a worker or Node (when a polyfill has set it). */
function defaultGpu(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  return nav?.gpu;
}

async function requestAdapter(options: AcquireOptions = {}): Promise<GPUAdapter> {
  const gpu = options.gpu ?? defaultGpu();
  if (!gpu) {
    throw new WebGPUUnavailableError('This browser does not expose WebGPU (navigator.gpu is missing).', WEBGPU_HELP);
  }
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  } catch (e) {
    throw new WebGPUUnavailableError(`Asking for a GPU adapter failed: ${(e as Error).message}.`, options.help ?? WEBGPU_HELP);
  }
  if (!adapter) {
    if (options.help) throw new WebGPUUnavailableError('WebGPU found no GPU adapter.', options.help);
    throw new WebGPUUnavailableError(
      'WebGPU is present but no GPU adapter is available (the GPU may be blocklisted, or the driver lacks Vulkan/Metal/D3D12 support).',
      WEBGPU_HELP + '\nIn Chrome, chrome://gpu shows why WebGPU is disabled.',
    );
  }
  return adapter;
}

/** An adapter and a device with the features and the adapter's largest limits (buffer and binding sizes included). */
async function acquireDevice(options: AcquireOptions): Promise<{ device: GPUDevice; report: AdapterReport }> {
  if (options.maxBindingBytes !== undefined && !(Number.isInteger(options.maxBindingBytes) && options.maxBindingBytes >= 4)) {
    throw new RangeError(`maxBindingBytes must be an integer of at least 4 bytes, got ${options.maxBindingBytes}`);
  }
  const adapter = await requestAdapter(options);
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of WANTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number>)[name];
    if (typeof v === 'number') requiredLimits[name] = v;
  }
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'lwm-studio' });
  } catch (e) {
    throw new WebGPUUnavailableError(`The GPU adapter refused to create a device: ${(e as Error).message}.`, options.help ?? WEBGPU_HELP);
  }
  const info = (adapter as GPUAdapter & { info?: GPUAdapterInfo }).info ?? ({} as GPUAdapterInfo);
  const isFallback = Boolean(
    (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter ?? (adapter as GPUAdapter & { isFallbackAdapter?: boolean }).isFallbackAdapter,
  );
  const lim = device.limits;
  const report: AdapterReport = {
    vendor: info.vendor || 'unknown',
    architecture: info.architecture || 'unknown',
    device: info.device || '',
    description: info.description || '',
    isFallbackAdapter: isFallback,
    features: {
      shaderF16: device.features.has('shader-f16'),
      subgroups: device.features.has('subgroups'),
      timestampQuery: device.features.has('timestamp-query'),
    },
    limits: {
      maxStorageBufferBindingSize: lim.maxStorageBufferBindingSize,
      maxBufferSize: lim.maxBufferSize,
      maxComputeWorkgroupStorageSize: lim.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: lim.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupSizeX: lim.maxComputeWorkgroupSizeX,
      maxComputeWorkgroupsPerDimension: lim.maxComputeWorkgroupsPerDimension,
      maxStorageBuffersPerShaderStage: lim.maxStorageBuffersPerShaderStage,
    },
  };
  return { device, report };
}

export class GpuRuntime {
  readonly device: GPUDevice;
  readonly report: AdapterReport;
  private readonly buffers = new Map<GPUBuffer, { bytes: number; label: string }>();
  private bytes = 0;
  private peakBytes = 0;
  private peakLive = 0;
  private readonly pipelines: Map<string, Promise<GPUComputePipeline>>;
  private readonly modules: Map<string, Promise<GPUShaderModule>>;
  private readonly listeners = new Set<(e: RuntimeEvent) => void>();
  private lostError: DeviceLostError | null = null;
  private readonly onUncaptured = (ev: Event) => {
    if (this.disposed) return;
    this.emit({ type: 'error', message: (ev as GPUUncapturedErrorEvent).error.message });
  };

  private constructor(
    device: GPUDevice,
    report: AdapterReport,
    private readonly options: AcquireOptions,
    private readonly lease: DeviceLease | null = null,
  ) {
    this.device = device;
    this.report = report;
    this.pipelines = lease?.pipelines ?? new Map();
    this.modules = lease?.modules ?? new Map();
    device.lost.then((info) => {
      // After dispose the device is ours to destroy, or a kept device another runtime now uses.
      if (this.disposed) return;
      this.lostError = new DeviceLostError(info.reason ?? 'unknown', info.message);
      this.emit({ type: 'lost', error: this.lostError });
    });
    device.addEventListener('uncapturederror', this.onUncaptured);
  }

  private disposed = false;
  private bindingCap = Infinity;

  /**
   * The most bytes one storage binding (and one buffer) may hold: the smaller of the device's
   * maxStorageBufferBindingSize and maxBufferSize, lowered by options.maxBindingBytes or
   * withBindingLimit. Parameters larger than this are split (src/model/shards.ts).
   */
  get bindingLimit(): number {
    const { maxStorageBufferBindingSize, maxBufferSize } = this.report.limits;
    const cap = Math.min(this.options.maxBindingBytes ?? Infinity, this.bindingCap);
    return Math.floor(Math.min(maxStorageBufferBindingSize, maxBufferSize, cap) / 4) * 4;
  }

  /** The same device with a binding limit of at most `bytes` (see bindingLimit). */
  withBindingLimit(bytes: number): GpuRuntime {
    if (!(Number.isInteger(bytes) && bytes >= 4)) throw new RangeError(`binding limit must be an integer of at least 4 bytes, got ${bytes}`);
    return Object.create(this, { bindingCap: { value: Math.min(bytes, this.bindingCap) } }) as GpuRuntime;
  }

  /** Acquire an adapter and a device with the features and the adapter's largest limits (buffer and binding sizes included). */
  static async create(options: AcquireOptions = {}): Promise<GpuRuntime> {
    const { device, report } = await acquireDevice(options);
    return new GpuRuntime(device, report, options);
  }

  /** A runtime owning a device acquired elsewhere (it destroys the device on dispose). */
  static onDevice(device: GPUDevice, report: AdapterReport, options: AcquireOptions): GpuRuntime {
    return new GpuRuntime(device, report, options);
  }

  /** A runtime on a kept device (DeviceKeeper): the device's compiled shaders and pipelines come with it. */
  static onLease(lease: DeviceLease, options: AcquireOptions): GpuRuntime {
    return new GpuRuntime(lease.device, lease.report, options, lease);
  }

  /** A fresh runtime on a new device, for after a loss. Buffers of the old one are gone. */
  async recreate(): Promise<GpuRuntime> {
    this.dispose();
    return GpuRuntime.create(this.options);
  }

  /** One-line adapter description for logs and test output. */
  describe(): string {
    const r = this.report;
    const parts = [r.vendor, r.architecture, r.device, r.description].filter(Boolean);
    return `${parts.join(' / ')}${r.isFallbackAdapter ? ' (fallback adapter)' : ''}`;
  }

  get lost(): DeviceLostError | null {
    return this.lostError;
  }

  on(listener: (e: RuntimeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: RuntimeEvent) {
    for (const l of this.listeners) l(e);
  }

  // ---- buffers -------------------------------------------------------------------------

  /** Allocate a tracked buffer. Size rounds up to a multiple of 4 (minimum 4). */
  createBuffer(label: string, size: number, usage: GPUBufferUsageFlags): GPUBuffer {
    const bytes = Math.max(4, Math.ceil(size / 4) * 4);
    if (bytes > this.report.limits.maxBufferSize) {
      throw new RangeError(`Buffer '${label}' needs ${bytes} bytes; this GPU allows at most ${this.report.limits.maxBufferSize}.`);
    }
    const buffer = this.device.createBuffer({ label, size: bytes, usage });
    this.buffers.set(buffer, { bytes, label });
    this.bytes += bytes;
    this.peakBytes = Math.max(this.peakBytes, this.bytes);
    this.peakLive = Math.max(this.peakLive, this.buffers.size);
    return buffer;
  }

  /** A storage buffer (read/write by kernels, copyable both ways), optionally filled. */
  storage(label: string, sizeOrData: number | ArrayBufferView, extraUsage: GPUBufferUsageFlags = 0): GPUBuffer {
    const size = typeof sizeOrData === 'number' ? sizeOrData : sizeOrData.byteLength;
    const buf = this.createBuffer(label, size, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extraUsage);
    if (typeof sizeOrData !== 'number') this.write(buf, sizeOrData);
    return buf;
  }

  /** A uniform buffer holding `data` (re-writable with write()). */
  uniform(label: string, data: ArrayBufferView): GPUBuffer {
    const buf = this.createBuffer(label, Math.max(16, data.byteLength), GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    this.write(buf, data);
    return buf;
  }

  write(buffer: GPUBuffer, data: ArrayBufferView, offsetBytes = 0): void {
    // writeBuffer needs a multiple-of-4 length; pad odd tails (e.g. byte arrays).
    if (data.byteLength % 4 !== 0) {
      const padded = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
      padded.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      this.device.queue.writeBuffer(buffer, offsetBytes, padded);
      return;
    }
    this.device.queue.writeBuffer(buffer, offsetBytes, data.buffer, data.byteOffset, data.byteLength);
  }

  release(...buffers: (GPUBuffer | null | undefined)[]): void {
    for (const buffer of buffers) {
      if (!buffer) continue;
      const entry = this.buffers.get(buffer);
      if (!entry) continue;
      this.buffers.delete(buffer);
      this.bytes -= entry.bytes;
      buffer.destroy();
    }
  }

  stats(): BufferStats {
    const byLabel: Record<string, number> = {};
    for (const { bytes, label } of this.buffers.values()) {
      const key = label.split(/[.:]/)[0] || label;
      byLabel[key] = (byLabel[key] ?? 0) + bytes;
    }
    return { live: this.buffers.size, bytes: this.bytes, peakLive: this.peakLive, peakBytes: this.peakBytes, byLabel };
  }

  // ---- read-back -----------------------------------------------------------------------

  /** Copy `byteLength` bytes of `buffer` (from `offset`) back to the CPU. */
  async read(buffer: GPUBuffer, byteLength = buffer.size, offset = 0): Promise<ArrayBuffer> {
    const size = Math.ceil(byteLength / 4) * 4;
    const staging = this.createBuffer('readback', size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
    try {
      const enc = this.device.createCommandEncoder({ label: 'readback' });
      enc.copyBufferToBuffer(buffer, offset, staging, 0, size);
      this.device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      return staging.getMappedRange().slice(0, byteLength);
    } finally {
      this.release(staging);
    }
  }

  async readF32(buffer: GPUBuffer, count?: number, offsetElems = 0): Promise<Float32Array> {
    const n = count ?? buffer.size / 4 - offsetElems;
    return new Float32Array(await this.read(buffer, n * 4, offsetElems * 4));
  }

  async readU32(buffer: GPUBuffer, count?: number, offsetElems = 0): Promise<Uint32Array> {
    const n = count ?? buffer.size / 4 - offsetElems;
    return new Uint32Array(await this.read(buffer, n * 4, offsetElems * 4));
  }

  // ---- shaders and pipelines -----------------------------------------------------------

  /** Compile a WGSL module once; errors name the shader file, line and column. */
  module(shader: ShaderSource): Promise<GPUShaderModule> {
    let p = this.modules.get(shader.file);
    if (!p) {
      p = this.compile(shader);
      this.modules.set(shader.file, p);
      p.catch(() => this.modules.delete(shader.file));
    }
    return p;
  }

  private async compile(shader: ShaderSource): Promise<GPUShaderModule> {
    this.device.pushErrorScope('validation');
    const module = this.device.createShaderModule({ label: shader.file, code: shader.code });
    const info = await module.getCompilationInfo();
    const scopeError = await this.device.popErrorScope();
    const lines = shader.code.split('\n');
    const messages: ShaderMessage[] = info.messages
      .filter((m) => m.type === 'error')
      .map((m) => ({
        ...sourceLine(shader, m.lineNum),
        column: m.linePos,
        type: m.type,
        message: m.message,
        source: lines[m.lineNum - 1] ?? '',
      }));
    if (messages.length > 0) throw new ShaderCompileError(messages);
    if (scopeError) throw new ShaderCompileError([{ file: shader.file, line: 0, column: 0, type: 'error', message: scopeError.message, source: '' }]);
    return module;
  }

  /**
   * A compute pipeline for `entryPoint` of `shader`, specialised by WGSL `override` constants.
   * Cached by (file, entry point, constants).
   */
  pipeline(shader: ShaderSource, entryPoint: string, constants: Record<string, number> = {}): Promise<GPUComputePipeline> {
    const key = `${shader.file}#${entryPoint}#${JSON.stringify(constants)}`;
    let p = this.pipelines.get(key);
    if (!p) {
      p = (async () => {
        const module = await this.module(shader);
        try {
          return await this.device.createComputePipelineAsync({
            label: `${shader.file}:${entryPoint}`,
            layout: 'auto',
            compute: { module, entryPoint, constants },
          });
        } catch (e) {
          throw new ShaderCompileError([
            { file: shader.file, line: 0, column: 0, type: 'error', message: `entry point '${entryPoint}': ${(e as Error).message}`, source: '' },
          ]);
        }
      })();
      this.pipelines.set(key, p);
      p.catch(() => this.pipelines.delete(key));
    }
    return p;
  }

  // ---- timing --------------------------------------------------------------------------

  /**
   * Run `encode` in one submission and measure it. With timestamp-query the GPU time covers
   * from the first to the last compute pass that uses the given `timestampWrites`; without it
   * gpuMs is null and only the wall time (submit to onSubmittedWorkDone) is known.
   */
  async timed(
    encode: (enc: GPUCommandEncoder, ts: { first?: GPUComputePassTimestampWrites; last?: GPUComputePassTimestampWrites }) => void,
  ): Promise<{ gpuMs: number | null; wallMs: number }> {
    const useTs = this.report.features.timestampQuery;
    let querySet: GPUQuerySet | null = null;
    let resolveBuf: GPUBuffer | null = null;
    const enc = this.device.createCommandEncoder({ label: 'timed' });
    const ts: { first?: GPUComputePassTimestampWrites; last?: GPUComputePassTimestampWrites } = {};
    if (useTs) {
      querySet = this.device.createQuerySet({ type: 'timestamp', count: 2 });
      resolveBuf = this.createBuffer('timestamps', 16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
      ts.first = { querySet, beginningOfPassWriteIndex: 0 };
      ts.last = { querySet, endOfPassWriteIndex: 1 };
    }
    encode(enc, ts);
    if (querySet && resolveBuf) enc.resolveQuerySet(querySet, 0, 2, resolveBuf, 0);
    const t0 = performance.now();
    this.device.queue.submit([enc.finish()]);
    await this.device.queue.onSubmittedWorkDone();
    const wallMs = performance.now() - t0;
    let gpuMs: number | null = null;
    if (querySet && resolveBuf) {
      try {
        const t = new BigUint64Array(await this.read(resolveBuf, 16));
        const ns = Number(t[1] - t[0]);
        gpuMs = ns > 0 ? ns / 1e6 : null;
      } finally {
        this.release(resolveBuf);
        querySet.destroy();
      }
    }
    return { gpuMs, wallMs };
  }

  /** Wait until the GPU has finished everything submitted so far. */
  async sync(): Promise<void> {
    await this.device.queue.onSubmittedWorkDone();
  }

  /** Release every tracked buffer and destroy the device. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const b of this.buffers.keys()) b.destroy();
    this.buffers.clear();
    this.bytes = 0;
    this.device.removeEventListener('uncapturederror', this.onUncaptured);
    if (this.lease) {
      // A kept device outlives its runtimes: its pipelines stay compiled for the next one.
      this.lease.release();
      return;
    }
    this.pipelines.clear();
    this.modules.clear();
    this.device.destroy();
  }
}

/** A kept device lent to one runtime at a time (see DeviceKeeper). */
export interface DeviceLease {
  readonly device: GPUDevice;
  readonly report: AdapterReport;
  readonly pipelines: Map<string, Promise<GPUComputePipeline>>;
  readonly modules: Map<string, Promise<GPUShaderModule>>;
  release(): void;
}

/**
 * Keeps one device for runtimes opened one after another in a long-lived process (a server, a
 * program using the library, a test file running several commands), so each does not compile every
 * shader again: on a CPU adapter (SwiftShader) compiling the training pipelines takes tens of
 * seconds. A runtime opened while the kept device is lent gets a device of its own, as does every
 * runtime after the kept device is lost. Each runtime tracks and frees its own buffers.
 */
export class DeviceKeeper {
  private kept: (Omit<DeviceLease, 'release'> & { busy: boolean }) | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * `idleMs`: how long a released device is kept for the next runtime before it is destroyed (a
   * live device keeps a Node process running, so a program that is done exits at most this late).
   */
  constructor(
    private readonly options: AcquireOptions = {},
    private readonly idleMs = 5_000,
  ) {}

  async open(): Promise<GpuRuntime> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.kept?.busy) return GpuRuntime.create(this.options);
    if (!this.kept) {
      const { device, report } = await acquireDevice(this.options);
      // Another open() may have kept a device meanwhile: this one is then the new runtime's own.
      if (this.kept) return GpuRuntime.onDevice(device, report, this.options);
      const kept = { device, report, pipelines: new Map(), modules: new Map(), busy: false };
      device.lost.then(() => {
        if (this.kept === kept) this.kept = null;
      });
      this.kept = kept;
    }
    return this.lend(this.kept);
  }

  /** Whether a device is kept and free: the next open() reuses it. */
  get idle(): boolean {
    return this.kept !== null && !this.kept.busy;
  }

  /** Destroy the kept device now (the process is done with the GPU); a runtime using it loses it. */
  close(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const kept = this.kept;
    this.kept = null;
    kept?.device.destroy();
  }

  private lend(kept: NonNullable<DeviceKeeper['kept']>): GpuRuntime {
    kept.busy = true;
    let released = false;
    const lease: DeviceLease = {
      ...kept,
      release: () => {
        if (released) return;
        released = true;
        kept.busy = false;
        if (this.kept !== kept) return;
        this.idleTimer = setTimeout(() => {
          if (this.kept === kept && !kept.busy) this.close();
        }, this.idleMs);
      },
    };
    return GpuRuntime.onLease(lease, this.options);
  }
}
