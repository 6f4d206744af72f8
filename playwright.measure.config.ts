import { defineConfig } from '@playwright/test';
import base from './playwright.config.ts';

// Long measured runs in the browser that write pictures for the docs (`*.measure.ts` in e2e/,
// which `npm test`'s end-to-end pattern does not match): `npm run screenshots -- --config playwright.measure.config.ts`.
export default defineConfig({ ...base, testMatch: '**/*.measure.ts', timeout: 3 * 3600_000 });
