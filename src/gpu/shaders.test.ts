// wgsl(): `// #include "x.wgsl"` splicing and the line map that keeps errors on the author's file and line.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourceLine, wgsl } from './shaders.ts';

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
