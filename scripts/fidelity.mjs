#!/usr/bin/env node
// One row of the fidelity table (docs/fidelity.md): a model, copy-last and the reference on fresh
// trajectories of one domain, through `lwm infer → lwm judge --judge local → lwm score`.
//
//   node scripts/fidelity.mjs --model CKPT --domain terminal [--seed 9001] [--n 30] [--out DIR] [--backend local|onnx]
//
// --backend local (default) runs the checkpoint on our WebGPU engine; --backend onnx exports it
// first (`lwm export --to onnx`, DIR/onnx) and runs that through onnxruntime's WASM engine, which
// is far faster without a GPU and predicts the same tokens (greedy: 248 of 248 terminal turns
// identical, docs/fidelity.md).
//
// The trajectories are `lwm gen --domain D --n N --seed S` (every turn: --eval-fraction 1), with a
// seed the recipe never trains on (its data seed is in src/train/recipe.ts). Writes DIR/gen.jsonl,
// DIR/pred-*.jsonl, DIR/judged-*.jsonl and DIR/scores.json, and prints one line per simulator.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    domain: { type: 'string', default: 'terminal' },
    seed: { type: 'string', default: '9001' },
    n: { type: 'string', default: '30' },
    out: { type: 'string' },
    'max-tokens': { type: 'string' },
    backend: { type: 'string', default: 'local' },
  },
});
const out = values.out ?? `fidelity-${values.domain}-${values.seed}`;
mkdirSync(out, { recursive: true });
const lwm = (...args) => {
  const r = spawnSync(process.execPath, [new URL('../bin/lwm.mjs', import.meta.url).pathname, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`lwm ${args.join(' ')} exited ${r.status}`);
  return r.stdout;
};

const gen = join(out, 'gen.jsonl');
lwm('gen', '--domain', values.domain, '--n', values.n, '--seed', values.seed, '-o', gen);
const simulators = [
  ['copy-last', ['--backend', 'copy-last']],
  ['reference', ['--backend', 'reference']],
];
if (values.backend !== 'local' && values.backend !== 'onnx') throw new Error(`--backend must be local or onnx; got ${values.backend}`);
if (values.model) {
  let model = values.model;
  if (values.backend === 'onnx') {
    model = join(out, 'onnx');
    lwm('export', values.model, '--to', 'onnx', '-o', model);
  }
  simulators.unshift(['model', ['--backend', values.backend, '--model', model, ...(values['max-tokens'] ? ['--max-tokens', values['max-tokens']] : [])]]);
}
const scores = {};
for (const [name, args] of simulators) {
  const pred = join(out, `pred-${name}.jsonl`);
  const judged = join(out, `judged-${name}.jsonl`);
  lwm('infer', gen, ...args, '--eval-fraction', '1', '-o', pred);
  lwm('judge', pred, '--judge', 'local', '-o', judged);
  const s = JSON.parse(lwm('score', judged, '--format', 'json'));
  scores[name] = s;
  const o = s.overall;
  console.log(
    `${name}: overall ${o.total.toFixed(1)}, factuality ${o.dimensions.factuality.toFixed(1)}, exact ${o.verifier.matched}/${o.verifier.checked} (${o.verifier.rate.toFixed(1)}%), ${o.valid} valid, ${o.failed} failed`,
  );
}
writeFileSync(
  join(out, 'scores.json'),
  JSON.stringify(
    { domain: values.domain, seed: Number(values.seed), n: Number(values.n), model: values.model ?? null, backend: values.backend, scores },
    null,
    2,
  ) + '\n',
);
// The number of turns, for the table.
console.log(`${readFileSync(gen, 'utf8').split('\n').filter(Boolean).length} trajectories → ${out}/scores.json`);
