#!/usr/bin/env node
// What the Playground must predict for a turn of a session on the tiny chat Llama exported to ONNX,
// computed in Node by our reference engine on the Hugging Face folder the export was made from
// (src/model/fixtures/hf/llama-chat): the turn as the Playground sends it (core's turnRequest), the
// chat template over the AgentWorldBench layout fitted to the context as a folder's prompt is
// (src/backends/hf.ts's hfPrompt), greedy up to the model's eos ids. e2e/onnx-folder.spec.ts runs
//   node e2e/onnx-expected.mjs SESSION.json TURN MAX_TOKENS
// and compares the page's text (onnxruntime-web's WASM provider in the browser) with what it prints.
// The source is TypeScript with WGSL imports: registered as bin/lwm.mjs does.
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('../bin/raw-loader.mjs', import.meta.url);
const { hfPrompt } = await import('../src/backends/hf.ts');
const { turnRequest } = await import('../src/envs/session.ts');
const { loadHfModel } = await import('../src/model/hf/load.ts');
const { nodeFolder } = await import('../src/model/hf/node.ts');
const { generateRef } = await import('../src/reference/gpt.ts');

const [sessionFile, turn, maxTokens] = process.argv.slice(2);
const session = JSON.parse(readFileSync(sessionFile, 'utf8'));
const big = Number.MAX_SAFE_INTEGER;
const m = await loadHfModel(await nodeFolder('src/model/fixtures/hf/llama-chat'), {
  limits: { maxBufferSize: big, maxStorageBufferBindingSize: big, memoryBudget: big, shaderF16: false },
});
const tok = m.tokenizer;
const n = Number(maxTokens);
const { ids } = hfPrompt(tok, turnRequest(session, Number(turn)), m.config.contextLength - n);
const out = [];
for (const id of generateRef(m.params, m.config, ids, { maxNewTokens: n, temperature: 0 })) {
  if (m.stopIds.includes(id)) break;
  out.push(id);
}
process.stdout.write(JSON.stringify({ promptTokens: ids.length, ids: out, text: tok.decode(out) }) + '\n');
