// `lwm serve` under eval.py-style traffic: AgentWorldBench records sent as the public inference
// script sends them (system prompt, user actions, assistant observations, streamed replies), one
// client at a time and eight at once, against the same model driven in-process the way
// `lwm infer --backend local` drives it (the peer: no HTTP, no queue). Records/s for each, and the
// time from a request to its first streamed piece of text.
//   npx tsx --import ./bin/raw-hook.mjs scripts/bench-serve.ts [--preset bench] [--trajectories 2]
//     [--turns 4] [--max-tokens 16] [--context 1024] [--json FILE]
// (`npm run bench -- --suite serve` runs it with the GPU environment set.)
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackend } from '../src/backends/open.ts';
import { nodeSource } from '../src/backends/node.ts';
import { awbMessages, turnRequestFromRecord } from '../src/core/bench/awbLayout.ts';
import { inferRecords } from '../src/core/bench/infer.ts';
import type { AwbSampleRecord } from '../src/core/bench/records.ts';
import { toAgentWorldBenchRecords } from '../src/core/formats/agentworldbench.ts';
import { presetConfig, type PresetName } from '../src/core/model/config.ts';
import { saveCheckpoint } from '../src/core/model/checkpoint.ts';
import { BUILTIN_TEMPLATES, renderTrajectory } from '../src/core/templates/index.ts';
import { trainBpe } from '../src/core/tokenizer/index.ts';
import { generateTrajectories } from '../src/envs/generate.ts';
import { initParams } from '../src/model/init.ts';
import { listen, OpenAIService } from '../src/serve/openai.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
const preset = arg('preset', 'bench') as PresetName;
const nTrajectories = Number(arg('trajectories', '2'));
const nTurns = Number(arg('turns', '4'));
const maxTokens = Number(arg('max-tokens', '16'));
const context = Number(arg('context', '1024'));
const jsonFile = process.argv.includes('--json') ? arg('json', '') : '';

const data = generateTrajectories('terminal', nTrajectories, 17).map((t) => ({ ...t, turns: t.turns.slice(0, nTurns) }));
const records = data.flatMap((t) => toAgentWorldBenchRecords({ ...t, source: undefined }) as AwbSampleRecord[]);
const tok = trainBpe(
  generateTrajectories('terminal', 40, 3).map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t)),
  { vocabSize: 1024 },
);
const config = presetConfig(preset, { vocabSize: tok.vocabSize, positions: 'rope', contextLength: context });
const dir = mkdtempSync(join(tmpdir(), 'lwm-bench-serve-'));
const file = join(dir, 'bench.safetensors');
writeFileSync(
  file,
  saveCheckpoint({
    config,
    params: initParams(config, 1),
    step: 0,
    extraMetadata: { tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify({ stage: 'sft', templates: { v0: 1 } }) },
  }),
);

const source = nodeSource();
const opened = await openBackend({ kind: 'checkpoint', checkpoint: { key: file } }, source);
const service = new OpenAIService(opened, { modelId: 'bench', domain: 'terminal' });
const { server, url } = await listen(service, '127.0.0.1', 0);

/** One eval.py-style request, streamed; resolves with the time to its first piece of text. */
async function ask(r: AwbSampleRecord): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench', messages: awbMessages(turnRequestFromRecord(r)), max_tokens: maxTokens, temperature: 0, stream: true }),
  });
  if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  let first = -1;
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (first < 0 && decoder.decode(value).includes('"content"')) first = performance.now() - t0;
  }
  return first;
}

async function served(concurrency: number): Promise<{ records_per_s: number; ttft_ms: number }> {
  const ttft: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < records.length) ttft.push(await ask(records[next++]));
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  ttft.sort((a, b) => a - b);
  return { records_per_s: records.length / wall, ttft_ms: ttft[Math.floor(ttft.length / 2)] };
}

async function direct(): Promise<{ records_per_s: number }> {
  const t0 = performance.now();
  const r = await inferRecords(records, { backend: opened.backend, generate: { maxTokens, temperature: 0 }, onRecord: () => {} });
  if (r.error || r.failed) throw new Error(`direct: ${r.failed} failed ${r.error?.message ?? ''}`);
  return { records_per_s: records.length / ((performance.now() - t0) / 1000) };
}

try {
  await ask({ ...records[0], system_str: 'warm up', turn_idx: 1 }); // pipelines compiled, the decode graph built
  const results = { 'in-process': await direct(), 'serve-c1': await served(1), 'serve-c8': await served(8) };
  const c = `${preset} ctx ${context}, ${records.length} eval.py records (${nTrajectories} trajectories x ${nTurns} turns), ${maxTokens} new`;
  console.log(`\n${c}`);
  console.log('engine       records/s  first text (median ms)  vs in-process');
  for (const [engine, x] of Object.entries(results)) {
    const ttft = 'ttft_ms' in x ? x.ttft_ms.toFixed(0) : '—';
    console.log(
      `${engine.padEnd(11)}  ${x.records_per_s.toFixed(3).padStart(9)}  ${ttft.padStart(22)}  ${(x.records_per_s / results['in-process'].records_per_s).toFixed(2).padStart(12)}x`,
    );
    if (jsonFile) {
      appendFileSync(jsonFile, JSON.stringify({ suite: 'serve', case: c, engine, metric: 'records_per_s', value: x.records_per_s, unit: 'records/s' }) + '\n');
      if ('ttft_ms' in x) appendFileSync(jsonFile, JSON.stringify({ suite: 'serve', case: c, engine, metric: 'ttft_ms', value: x.ttft_ms, unit: 'ms' }) + '\n');
    }
  }
} finally {
  await new Promise((r) => server.close(r));
  opened.dispose();
  source.release?.();
  rmSync(dir, { recursive: true, force: true });
}
