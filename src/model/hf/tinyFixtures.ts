// The tiny Hugging Face models of src/model/fixtures/hf/<arch>/ (written by
// scripts/fixtures/hf_tiny_models.py) and what transformers computed for them, read the same way
// in Node (unit and gpu-node tests) and in the browser (gpu-browser tests). Tests only.
import type { HfModelConfig } from './config.ts';
import { filesFolder } from './files.ts';
import { loadHfModel } from './load.ts';

export const TINY_ARCHS = ['llama', 'qwen2', 'qwen3'] as const;
export type TinyArch = (typeof TINY_ARCHS)[number];

export interface TinyModel {
  arch: TinyArch;
  hf: HfModelConfig;
  rawConfig: Record<string, unknown>;
  params: Float32Array;
  /** transformers' results: logits [inputIds.length][vocab] and the greedy continuation. */
  inputIds: number[];
  logits: number[][];
  greedy: number[];
}

async function fixtureBytes(arch: TinyArch, file: string): Promise<Uint8Array> {
  const url = new URL(`../fixtures/hf/${arch}/${file}`, import.meta.url);
  if (url.protocol === 'file:') {
    const fs = await import('node:fs/promises');
    return new Uint8Array(await fs.readFile(url));
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fixture ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function fixtureJson(arch: TinyArch, file: string): Promise<Record<string, unknown>> {
  return JSON.parse(new TextDecoder().decode(await fixtureBytes(arch, file))) as Record<string, unknown>;
}

/** Limits no tiny model comes near. */
const TINY_LIMITS = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30 };

export async function loadTinyModel(arch: TinyArch): Promise<TinyModel> {
  const names = ['config.json', 'generation_config.json', 'model.safetensors'];
  const entries = await Promise.all(
    names.map(async (n) => ({ path: `${arch}/${n}`, file: new Blob([(await fixtureBytes(arch, n)) as Uint8Array<ArrayBuffer>]) })),
  );
  const m = await loadHfModel(filesFolder(entries), { limits: TINY_LIMITS });
  const expected = (await fixtureJson(arch, 'expected.json')) as { input_ids: number[]; logits: number[][]; greedy: number[] };
  return {
    arch,
    hf: m.hf,
    rawConfig: m.rawConfig as Record<string, unknown>,
    params: m.params,
    inputIds: expected.input_ids,
    logits: expected.logits,
    greedy: expected.greedy,
  };
}

/** Max over all logits of |got − want| / max(|want|, 1): the parity measure (1e-4 asked). */
export function maxRelError(got: ArrayLike<number>, want: number[][]): number {
  const flat = want.flat();
  if (got.length !== flat.length) throw new Error(`logits: ${got.length} values, expected ${flat.length}`);
  let worst = 0;
  for (let i = 0; i < flat.length; i++) worst = Math.max(worst, Math.abs(got[i] - flat[i]) / Math.max(Math.abs(flat[i]), 1));
  return worst;
}
