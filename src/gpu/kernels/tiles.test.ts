// The launchers' tile sizes (tiles.ts) equal the constants the shaders declare.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ATTENTION_MAX_BC, ATTENTION_TILE_VEC4, MATMUL_ROWS_N, MATMUL_TILE_M, MATMUL_TILE_N } from './tiles.ts';

function wgslConst(shader: string, name: string): number {
  const text = readFileSync(new URL(`../../../shaders/${shader}`, import.meta.url), 'utf8');
  const m = new RegExp(`^const ${name}: u32 = (\\d+)u;`, 'm').exec(text);
  if (!m) throw new Error(`shaders/${shader} declares no const ${name}: u32`);
  return Number(m[1]);
}

describe('tile sizes shared by WGSL and TypeScript', () => {
  it('matmul', () => {
    expect(wgslConst('matmul.wgsl', 'TILE_M')).toBe(MATMUL_TILE_M);
    expect(wgslConst('matmul.wgsl', 'TILE_N')).toBe(MATMUL_TILE_N);
    expect(wgslConst('matmul.wgsl', 'ROWS_N')).toBe(MATMUL_ROWS_N);
  });
  it('attention', () => {
    // attention.wgsl and prefix_attention.wgsl both #include attention_common.wgsl.
    expect(wgslConst('attention_common.wgsl', 'TILE_VEC4')).toBe(ATTENTION_TILE_VEC4);
    expect(wgslConst('attention_common.wgsl', 'MAX_BC')).toBe(ATTENTION_MAX_BC);
  });
});
