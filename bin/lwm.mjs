#!/usr/bin/env node
// The `lwm` command: runs src/cli/main.ts through tsx, with a loader hook that makes
// `import x from './file.wgsl?raw'` work in Node the way it does in Vite.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./raw-loader.mjs', import.meta.url);
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
