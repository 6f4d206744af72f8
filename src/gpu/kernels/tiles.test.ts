// The sizes in tiles.ts are the ones the shaders compile with: each shader declares them only
// through its generated include, so the composed text holds the TypeScript value, once.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type ShaderSource, sourceLine } from '../shaders.ts';
import { ADAMW_SHADER } from './adamw.ts';
import { ATTENTION_SHADER } from './attention.ts';
import { MATMUL_SHADER } from './matmul.ts';
import { PREFIX_ATTENTION_SHADER } from './prefixAttention.ts';
import { ADAMW_CHUNK, ADAMW_PER_THREAD, ATTENTION_MAX_BC, ATTENTION_TILE_VEC4, MATMUL_ROWS_N, MATMUL_TILE_M, MATMUL_TILE_N, XENT_SEGMENT } from './tiles.ts';
import { XENT_SHADER } from './xent.ts';

function expectConsts(shader: ShaderSource, values: Record<string, number>, files: string[]): void {
  const lines = shader.code.split('\n');
  for (const [name, value] of Object.entries(values)) {
    const at = lines.flatMap((l, i) => (new RegExp(`^const ${name}: `).test(l) ? [i + 1] : []));
    expect(at, `${shader.file} declares ${name} once`).toHaveLength(1);
    expect(lines[at[0] - 1]).toBe(`const ${name}: u32 = ${value}u;`);
    expect(sourceLine(shader, at[0]).file).toBe('src/gpu/kernels/tiles.ts');
    for (const f of files) {
      const text = readFileSync(new URL(`../../../shaders/${f}`, import.meta.url), 'utf8');
      expect(text, `shaders/${f} leaves ${name} to tiles.ts`).not.toMatch(new RegExp(`^\\s*(const|override) ${name}\\b`, 'm'));
    }
  }
}

describe('sizes shared by WGSL and TypeScript are written once, in tiles.ts', () => {
  it('matmul', () => {
    expectConsts(MATMUL_SHADER, { TILE_M: MATMUL_TILE_M, TILE_N: MATMUL_TILE_N, ROWS_N: MATMUL_ROWS_N }, [
      'matmul.wgsl',
      'matmul_tiled.wgsl',
      'matmul_rows.wgsl',
    ]);
  });
  it('attention and prefix attention (through attention_common.wgsl)', () => {
    for (const s of [ATTENTION_SHADER, PREFIX_ATTENTION_SHADER]) {
      expectConsts(s, { TILE_VEC4: ATTENTION_TILE_VEC4, MAX_BC: ATTENTION_MAX_BC }, ['attention.wgsl', 'prefix_attention.wgsl', 'attention_common.wgsl']);
    }
  });
  it('cross-entropy and AdamW', () => {
    expectConsts(XENT_SHADER, { SEG: XENT_SEGMENT }, ['xent.wgsl']);
    expectConsts(ADAMW_SHADER, { PER_THREAD: ADAMW_PER_THREAD, CHUNK: ADAMW_CHUNK }, ['adamw.wgsl', 'adamw_step.wgsl']);
    expect(ADAMW_CHUNK).toBe(2048);
  });
});
