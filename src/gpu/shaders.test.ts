// wgsl(): `// #include "x.wgsl"` splicing and the line map that keeps errors on the author's file and line.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { consts, sourceLine, wgsl } from './shaders.ts';

describe('wgsl includes', () => {
  it('leaves a shader without includes as it is', () => {
    const s = wgsl('a.wgsl', 'fn f() {}\n');
    expect(s).toEqual({ file: 'shaders/a.wgsl', code: 'fn f() {}\n' });
    expect(sourceLine(s, 1)).toEqual({ file: 'shaders/a.wgsl', line: 1 });
  });

  it('splices included text in place of the line and maps every line back', () => {
    const s = wgsl('main.wgsl', 'a1\n  // #include "inc.wgsl"\na3', { 'inc.wgsl': 'i1\n// #include "deep.wgsl"\ni3', 'deep.wgsl': 'd1' });
    expect(s.code).toBe('a1\ni1\nd1\ni3\na3');
    expect([1, 2, 3, 4, 5].map((n) => sourceLine(s, n))).toEqual([
      { file: 'shaders/main.wgsl', line: 1 },
      { file: 'shaders/inc.wgsl', line: 1 },
      { file: 'shaders/deep.wgsl', line: 1 },
      { file: 'shaders/inc.wgsl', line: 3 },
      { file: 'shaders/main.wgsl', line: 3 },
    ]);
  });

  it('says which line names an include it was not given, and catches include cycles', () => {
    expect(() => wgsl('main.wgsl', 'a\n// #include "gone.wgsl"\n')).toThrow(/shaders\/main\.wgsl:2: #include "gone\.wgsl" is not given/);
    expect(() => wgsl('main.wgsl', '// #include "x.wgsl"', { 'x.wgsl': '// #include "main.wgsl"', 'main.wgsl': '' })).toThrow(/includes itself/);
  });

  it('instantiates a template once per include line, whole words only, line for line', () => {
    const tpl = '// #template T NAME\nfn NAME(x: T) -> T { return x * T(2.0) + p.T; } // NAMES, T_1';
    const s = wgsl('main.wgsl', 'a\n// #include "t.wgsl" T=f32 NAME=twice\n// #include "t.wgsl" T=vec4f NAME=twice4', { 't.wgsl': tpl });
    expect(s.code.split('\n')).toEqual([
      'a',
      '// #template T NAME',
      'fn twice(x: f32) -> f32 { return x * f32(2.0) + p.T; } // NAMES, T_1',
      '// #template T NAME',
      'fn twice4(x: vec4f) -> vec4f { return x * vec4f(2.0) + p.T; } // NAMES, T_1',
    ]);
    expect(sourceLine(s, 3)).toEqual({ file: 'shaders/t.wgsl', line: 2 });
    expect(sourceLine(s, 5)).toEqual({ file: 'shaders/t.wgsl', line: 2 });
  });

  it('passes template values on through nested include lines, and checks every parameter is given once', () => {
    const s = wgsl('main.wgsl', '// #include "outer.wgsl" T=u32', {
      'outer.wgsl': '// #template T\n// #include "inner.wgsl" U=T',
      'inner.wgsl': '// #template U\nvar<private> x: U;',
    });
    expect(s.code).toBe('// #template T\n// #template U\nvar<private> x: u32;');
    const inc = { 't.wgsl': '// #template T NAME\nfn NAME() -> T {}', 'plain.wgsl': 'fn f() {}' };
    expect(() => wgsl('m.wgsl', '\n// #include "t.wgsl" T=f32', inc)).toThrow(/shaders\/m\.wgsl:2: #include "t\.wgsl" takes T, NAME; missing NAME/);
    expect(() => wgsl('m.wgsl', '// #include "t.wgsl" T=f32 NAME=g X=1', inc)).toThrow(/takes T, NAME; given X/);
    expect(() => wgsl('m.wgsl', '// #include "plain.wgsl" T=f32', inc)).toThrow(/"plain\.wgsl" is not a template; given T/);
  });

  it('splices generated constants, mapping their lines to the TypeScript that owns them', () => {
    const s = wgsl('main.wgsl', 'a\n// #include "tiles.wgsl"\nb', { 'tiles.wgsl': consts('src/gpu/kernels/tiles.ts', { TILE_M: 64, ROWS: 3 }) });
    expect(s.code).toBe('a\nconst TILE_M: u32 = 64u;\nconst ROWS: u32 = 3u;\nb');
    expect(sourceLine(s, 3)).toEqual({ file: 'src/gpu/kernels/tiles.ts', line: 2 });
    expect(sourceLine(s, 4)).toEqual({ file: 'shaders/main.wgsl', line: 3 });
    expect(() => consts('x.ts', { A: -1 })).toThrow(/A = -1 is not a u32 constant/);
    expect(() => consts('x.ts', { A: 1.5 })).toThrow(/not a u32/);
  });

  it('the attention shaders include the shared part they are launched with', () => {
    for (const f of ['attention.wgsl', 'prefix_attention.wgsl']) {
      const text = readFileSync(new URL(`../../shaders/${f}`, import.meta.url), 'utf8');
      expect(
        text.split('\n').filter((l) => l.trim() === '// #include "attention_common.wgsl"'),
        f,
      ).toHaveLength(1);
    }
  });
});

describe('the workgroup grid helper', () => {
  it('is written once: every shader that flattens a 2-D grid includes grid.wgsl and calls flat_group / flat_thread', () => {
    const dir = new URL('../../shaders/', import.meta.url);
    const users: string[] = [];
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.wgsl') && n !== 'grid.wgsl')) {
      const text = readFileSync(new URL(f, dir), 'utf8');
      expect(text, f).not.toMatch(/wg\.y\s*\*\s*nwg\.x/);
      if (/num_workgroups/.test(text)) {
        expect(text, f).toMatch(/^\/\/ #include "grid\.wgsl"$/m);
        expect(text, f).toMatch(/flat_(group|thread)\(wg, nwg/);
        users.push(f);
      }
    }
    expect(users.length).toBeGreaterThanOrEqual(9);
  });
});
