// Errors a user or a shader author can meet in the GPU runtime, each with what to do next.

/** navigator.gpu is missing or no adapter could be had. `help` says how to get WebGPU. */
export class WebGPUUnavailableError extends Error {
  constructor(
    message: string,
    readonly help: string,
  ) {
    super(`${message}\n${help}`);
    this.name = 'WebGPUUnavailableError';
  }
}

export const WEBGPU_HELP = [
  'WebGPU is needed to train and run models. It is available in:',
  '  - Chrome / Edge 113+ on Windows, macOS and ChromeOS (on by default);',
  '  - Chrome 121+ on Android 12+ with a recent GPU;',
  '  - Chrome / Chromium on Linux: start it with --enable-unsafe-webgpu (and --enable-features=Vulkan on some drivers), or enable chrome://flags/#enable-unsafe-webgpu;',
  '  - Safari 26+ on macOS / iOS (Safari 18: enable WebGPU under Develop → Feature Flags);',
  '  - Firefox 141+ on Windows (Nightly elsewhere: set dom.webgpu.enabled in about:config).',
  'Data, templates, environments and judging work without WebGPU.',
].join('\n');

export interface ShaderMessage {
  file: string;
  line: number;
  column: number;
  type: GPUCompilationMessageType;
  message: string;
  /** The offending source line, for context. */
  source: string;
}

/** WGSL failed to compile or validate; every message names shaders/<file>:line:column. */
export class ShaderCompileError extends Error {
  constructor(readonly messages: ShaderMessage[]) {
    super(messages.map((m) => `${m.file}:${m.line}:${m.column}: ${m.type}: ${m.message}${m.source ? `\n    ${m.source.trim()}` : ''}`).join('\n'));
    this.name = 'ShaderCompileError';
  }
}

/** The GPU device was lost (driver reset, another tab took the GPU, the device was destroyed). */
export class DeviceLostError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(`The GPU device was lost (${reason}): ${message || 'no details given'}. Re-create the device to continue.`);
    this.name = 'DeviceLostError';
  }
}
