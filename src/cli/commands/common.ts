// What several commands do the same way: read the training data (the built-in dataset without
// --data), read a whole file, open the GPU through Dawn, take the endpoint key from the
// environment, turn a model argument that is a Hugging Face Hub id into its folder, and tell an
// error the user can act on from a bug.
import { readFileSync } from 'node:fs';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { FileError, type CliIO } from '../io.ts';
import { DEFAULT_DATASET, loadFile } from './validate.ts';

/**
 * The path a model argument names (--model, --from, export's CKPT): itself when it is on disk or
 * written as a path, else a Hugging Face Hub id (`org/name[@revision]`) downloaded into the
 * Hugging Face cache or found there (src/backends/node.ts modelPath), its progress on stderr; a
 * Hub failure is a FileError naming the id.
 */
export async function modelArg(io: CliIO, model: string): Promise<string> {
  const { modelPath } = await import('../../backends/node.ts');
  const { BackendError } = await import('../../backends/errors.ts');
  try {
    return await modelPath(model, { log: (line) => io.err(line) });
  } catch (e) {
    throw e instanceof BackendError ? new FileError(e.message) : e;
  }
}

/** The endpoint API key when no flag gives one. */
export function envApiKey(): string | undefined {
  return process.env.LWM_API_KEY ?? process.env.OPENAI_API_KEY;
}

/** --data FILE, or the built-in dataset (said on stderr); null, said on stderr, when it holds no usable trajectory. */
export async function loadTrainingData(io: CliIO, data: string | undefined) {
  const file = data ?? DEFAULT_DATASET;
  if (!data) io.err(`(no --data: using the built-in default dataset, ${file})\n`);
  const loaded = await loadFile(io, file);
  if (!loaded.readable || loaded.trajectories.length === 0) {
    io.err(`${file}: no usable trajectories\n`);
    return null;
  }
  return { file, ...loaded };
}

/** A whole file, as bytes or as UTF-8 text; null, with `PATH: cannot read (CODE)` on stderr, when it cannot be read. */
export function readWhole(io: CliIO, path: string): Uint8Array | null;
export function readWhole(io: CliIO, path: string, encoding: 'utf8'): string | null;
export function readWhole(io: CliIO, path: string, encoding?: 'utf8'): Uint8Array | string | null {
  try {
    return encoding ? readFileSync(path, encoding) : new Uint8Array(readFileSync(path));
  } catch (e) {
    io.err(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
    return null;
  }
}

/** A GPU runtime on Dawn; null, with `prefix` and why on stderr, when Node has no WebGPU adapter. */
export async function openNodeRuntime(io: CliIO, prefix: string): Promise<GpuRuntime | null> {
  const { nodeRuntime } = await import('../../gpu/node.ts');
  try {
    return await nodeRuntime();
  } catch (e) {
    io.err(`${prefix}${(e as Error).message}\n`);
    return null;
  }
}

/**
 * An error the user can act on (a bad setting, an unreadable checkpoint, a refused request): one
 * line on stderr and exit 1 rather than a stack. Checkpoint errors are known by name, so that
 * this module loads no model code.
 */
export function isUserError(e: unknown, kinds: (abstract new (...args: never[]) => Error)[]): boolean {
  return kinds.some((k) => e instanceof k) || (e as Error).name === 'CheckpointError' || (e as Error).name === 'SafetensorsError';
}
