// `lwm infer` on a local model, with the kept KV cache of earlier prompts (prefix reuse) against
// without, same run, same model, same records: prefill tokens/s, decode tokens/s and records/s on
// AgentWorldBench-shaped records — several trajectories, each with many turns, every turn's
// prompt a long system prompt plus the growing history, and short outputs. The records go the
// way `lwm infer --backend local` sends them: through the checkpoint backend (tokenizer,
// template, the context fit) in inferRecords, grouped by shared prompt start.
//   npx tsx --import ./bin/raw-hook.mjs scripts/bench-infer.ts [--preset bench] [--trajectories 3]
//     [--turns 8] [--max-tokens 16] [--context 1024] [--json FILE]
// (`npm run bench -- --suite infer` runs it with the GPU environment set.)
import { appendFileSync } from 'node:fs';
import { inferRecords, sharedPrefixOrder } from '../src/core/bench/infer.ts';
import type { AwbSampleRecord } from '../src/core/bench/records.ts';
import { generateTrajectories } from '../src/envs/generate.ts';
import { toAgentWorldBenchRecords } from '../src/core/formats/agentworldbench.ts';
import { BUILTIN_TEMPLATES, renderTrajectory } from '../src/core/templates/index.ts';
import { trainBpe } from '../src/core/tokenizer/index.ts';
import { openCheckpointBackend } from '../src/backends/checkpoint.ts';
import { nodeGpu } from '../src/gpu/node.ts';
import { GpuRuntime } from '../src/gpu/runtime.ts';
import { presetConfig, type PresetName } from '../src/core/model/config.ts';
import { initParams } from '../src/model/init.ts';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}
const preset = arg('preset', 'bench') as PresetName;
const nTrajectories = Number(arg('trajectories', '3'));
const nTurns = Number(arg('turns', '8'));
const maxTokens = Number(arg('max-tokens', '16'));
const context = Number(arg('context', '1024'));
const jsonFile = process.argv.includes('--json') ? arg('json', '') : '';

// Records: terminal trajectories (a system prompt of task, initial state, rules and action
// space; shell outputs as observations), their first nTurns turns, turn-major as a file sorted
// by turn would list them.
const data = generateTrajectories('terminal', nTrajectories, 17).map((t) => ({ ...t, turns: t.turns.slice(0, nTurns) }));
const perTrajectory = data.map((t) => toAgentWorldBenchRecords({ ...t, source: undefined }) as AwbSampleRecord[]);
const input: AwbSampleRecord[] = [];
for (let k = 0; k < nTurns; k++) for (const t of perTrajectory) if (t[k]) input.push(t[k]);
const records = sharedPrefixOrder(input).map((i) => input[i]);

const tok = trainBpe(
  generateTrajectories('terminal', 40, 3).map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t)),
  { vocabSize: 1024 },
);
const config = presetConfig(preset, { vocabSize: tok.vocabSize, positions: 'rope', contextLength: context });
const params = initParams(config, 1);
const checkpoint = {
  config,
  params,
  step: 0,
  extraMetadata: { tokenizer: JSON.stringify(tok.toJSON()), spec: JSON.stringify({ stage: 'sft', templates: { v0: 1 } }) },
};

const rt = await GpuRuntime.create({ gpu: await nodeGpu() });
console.log(`adapter: ${rt.describe()}`);
const engines = [
  { engine: 'lwm-prefix-reuse', slots: 4 },
  { engine: 'no-reuse', slots: 0 },
];
const results: Record<
  string,
  { records_per_s: number; prefill_tokens_per_s: number; decode_tokens_per_s: number; reused_share: number; prompt_tokens: number }
> = {};
for (const { engine, slots } of engines) {
  const local = openCheckpointBackend(rt, checkpoint, { name: engine, prefixSlots: slots });
  try {
    // Warm up: pipelines compiled, the decode graph built (its prompt shares nothing with the records).
    await inferRecords([{ ...records[0], system_str: 'warm up', turn_idx: 1 }], {
      backend: local.backend,
      generate: { maxTokens: 2, temperature: 0 },
      onRecord: () => {},
    });
    const before = { ...local.stats };
    const t0 = performance.now();
    const r = await inferRecords(records, { backend: local.backend, generate: { maxTokens, temperature: 0 }, onRecord: () => {} });
    const wall = (performance.now() - t0) / 1000;
    if (r.error || r.failed) throw new Error(`${engine}: ${r.failed} failed ${r.error?.message ?? ''}`);
    const s = local.stats;
    const promptTokens = s.promptTokens - before.promptTokens;
    results[engine] = {
      records_per_s: records.length / wall,
      prefill_tokens_per_s: promptTokens / ((s.prefillMs - before.prefillMs) / 1000),
      decode_tokens_per_s: (s.decodeTokens - before.decodeTokens) / ((s.decodeMs - before.decodeMs) / 1000),
      reused_share: (s.reusedTokens - before.reusedTokens) / promptTokens,
      prompt_tokens: promptTokens / records.length,
    };
    console.log(`${engine}: ${records.length} records in ${wall.toFixed(1)} s`);
  } finally {
    local.dispose();
  }
}
rt.dispose();

const c = `${preset} ctx ${context}, ${nTrajectories} trajectories x ${nTurns} turns, ~${Math.round(results['no-reuse'].prompt_tokens)}-token prompts, ${maxTokens} new`;
const units = { records_per_s: 'records/s', prefill_tokens_per_s: 'prompt tokens/s', decode_tokens_per_s: 'tokens/s', reused_share: 'fraction' } as const;
console.log(`\n${c}`);
console.log(`engine             records/s  prefill tok/s  decode tok/s  prompt share reused`);
for (const { engine } of engines) {
  const x = results[engine];
  console.log(
    `${engine.padEnd(17)}  ${x.records_per_s.toFixed(3).padStart(9)}  ${x.prefill_tokens_per_s.toFixed(0).padStart(13)}  ${x.decode_tokens_per_s.toFixed(1).padStart(12)}  ${(100 * x.reused_share).toFixed(0).padStart(18)}%`,
  );
  // The reused share is ours alone (a peer's 0 is no rate to divide by).
  if (jsonFile)
    for (const [metric, unit] of Object.entries(units))
      if (metric !== 'reused_share' || x.reused_share > 0)
        appendFileSync(jsonFile, JSON.stringify({ suite: 'infer', case: c, engine, metric, value: x[metric as keyof typeof units], unit }) + '\n');
}
const ratio = results['lwm-prefix-reuse'].records_per_s / results['no-reuse'].records_per_s;
console.log(
  `prefix reuse: ${ratio.toFixed(2)}x records/s, ${(results['lwm-prefix-reuse'].prefill_tokens_per_s / results['no-reuse'].prefill_tokens_per_s).toFixed(2)}x prompt tokens/s`,
);
