import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { generateValidatorsSource } from './generate.ts';

describe('validators.generated.ts', () => {
  const committed = readFileSync(new URL('./validators.generated.ts', import.meta.url), 'utf8');
  it('is what scripts/gen-validators.ts writes from the current schemas (run it after editing schema.ts)', () => {
    expect(committed === generateValidatorsSource()).toBe(true);
  });
  it('needs no eval and no ajv at run time', () => {
    expect(committed).not.toMatch(/new Function|\beval\(|require\(|from 'ajv'/);
  });
});
