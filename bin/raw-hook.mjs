// `node --import ./bin/raw-hook.mjs` (or tsx --import): enables `?raw` imports of WGSL in Node.
import { register } from 'node:module';

register('./raw-loader.mjs', import.meta.url);
