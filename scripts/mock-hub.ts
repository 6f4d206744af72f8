// The mock Hugging Face Hub of the tests (src/hub/testing.ts) on its own, for checking the cache
// against huggingface_hub and transformers by hand (docs/cli.md, "Models from the Hugging Face Hub"):
//
//   node_modules/.bin/tsx scripts/mock-hub.ts [--port 8765]
//
// serves org/tiny (the tiny Llama with a chat template, src/model/fixtures/hf/llama-chat; a second
// commit on main changes generation_config.json, tag v1 is the first), org/sharded (a sharded
// safetensors folder) and org/gated (token hf_gated_token). It prints HF_ENDPOINT and runs until stopped.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { folderFiles, startMockHub } from '../src/hub/testing.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8765' } } });
const tiny = folderFiles(fileURLToPath(new URL('../src/model/fixtures/hf/llama-chat', import.meta.url)), { skip: ['generate.json'] });
const sharded = folderFiles(fileURLToPath(new URL('../src/model/hf/fixtures/safetensors/sharded-f16', import.meta.url)));
const generation = JSON.parse(new TextDecoder().decode(tiny['generation_config.json']));
const changed = { ...tiny, 'generation_config.json': new TextEncoder().encode(`${JSON.stringify({ ...generation, max_new_tokens: 7 }, null, 2)}\n`) };
const hub = await startMockHub(
  [
    { repo: 'org/tiny', refs: { main: 1, v1: 0 }, commits: [tiny, changed] },
    { repo: 'org/sharded', refs: { main: 0 }, commits: [sharded] },
    { repo: 'org/gated', refs: { main: 0 }, commits: [tiny], gatedToken: 'hf_gated_token' },
  ],
  { port: Number(values.port) },
);
process.stdout.write(`HF_ENDPOINT=${hub.endpoint}\n`);
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => void hub.close().then(() => process.exit(0)));
