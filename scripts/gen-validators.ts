// Compiles the JSON Schemas of src/core/schema/schema.ts ahead of time with ajv's standalone code
// generation, so the app validates without ajv's run-time `new Function()` (which a
// Content-Security-Policy without 'unsafe-eval' forbids). Writes src/core/schema/validators.generated.ts;
// src/core/schema/validators.test.ts fails when that file is not what this script would write.
//   npx tsx scripts/gen-validators.ts
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateValidatorsSource } from '../src/core/schema/generate.ts';

const target = fileURLToPath(new URL('../src/core/schema/validators.generated.ts', import.meta.url));
writeFileSync(target, generateValidatorsSource());
console.log(`wrote ${target}`);
