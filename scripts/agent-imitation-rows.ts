// An agent run's imitation rows as JSON, for measuring imitation outside the GPU trainer
// (scripts/agent_imitation.py; docs/method.md §13): the train rows of `lwm agent train` on a
// family (prompt ids fitted to T − maxNewTokens + 1, the action's ids with its end) and the
// first action of each held-out task, with the tokenizer a fresh policy of the run builds.
//   npx tsx --import ./bin/raw-hook.mjs scripts/agent-imitation-rows.ts --domain mcp --families write_file --tokens 96 --max-new-tokens 42 -o rows.json
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { KnownDomain } from '../src/core/schema/types.ts';
import { listTasks, policyTarget, type PolicySample } from '../src/envs/tasks/index.ts';
import { familyBudgets } from '../src/train/agent/budgets.ts';
import { ourCodec } from '../src/train/agent/codec.ts';
import { AGENT_DEFAULTS, policyPrompt } from '../src/train/agent/run.ts';
import { imitationSamples, policyTokenizer } from '../src/train/agent/samples.ts';

const { values: v } = parseArgs({
  options: {
    domain: { type: 'string' },
    families: { type: 'string' },
    tokens: { type: 'string' },
    'max-new-tokens': { type: 'string' },
    'train-tasks': { type: 'string' },
    'eval-tasks': { type: 'string' },
    'solver-share': { type: 'string' },
    out: { type: 'string', short: 'o' },
  },
});
if (!v.domain || !v.families || !v.out) {
  console.error(
    'usage: agent-imitation-rows.ts --domain D --families F[,F…] [--tokens T] [--max-new-tokens N] [--train-tasks N] [--eval-tasks N] [--solver-share S] -o OUT.json',
  );
  process.exit(2);
}
const domain = v.domain as KnownDomain;
const families = v.families.split(',');
const budgets = familyBudgets(domain, families);
const T = Number(v.tokens ?? budgets.T);
const maxNewTokens = Number(v['max-new-tokens'] ?? budgets.maxNewTokens);
const layout = AGENT_DEFAULTS.layout;
const train = listTasks({ split: 'train', count: Number(v['train-tasks'] ?? AGENT_DEFAULTS.trainTasks), domains: [domain], families });
const heldout = listTasks({ split: 'heldout', count: Number(v['eval-tasks'] ?? 64), domains: [domain], families });
// --solver-share S: a demonstrator that errs, playing a near miss on the other tasks (imitationSamples).
const samples = imitationSamples(train, Number(v['solver-share'] ?? 1));
// The tokenizer of the solver's episodes, as the run builds it, whatever the demonstrator did.
const tokenizer = policyTokenizer(imitationSamples(train), AGENT_DEFAULTS.vocabSize, layout);
const codec = ourCodec(tokenizer);
// The run's own prompt fit (run.ts's policyPrompt), so the rows are the ones it trains on.
const row = (s: PolicySample) => ({
  prompt: policyPrompt(s, codec, { T, maxNewTokens, layout }),
  target: codec.encodeParts(policyTarget(s, codec.format)),
});
const held = imitationSamples(heldout)
  .filter((s) => s.step === 0)
  .map(row);
// The tokenizer too, so that scripts/agent_imitation.py --init can check a fresh policy of the run has the same one.
writeFileSync(
  v.out,
  JSON.stringify({ vocab: codec.vocabSize, pad: codec.pad, end: codec.endAction, T, tokenizer: tokenizer.toJSON(), rows: samples.map(row), held }),
);
console.log(`${samples.length} train rows, ${held.length} held-out first actions, ${codec.vocabSize} tokens, T ${T} → ${v.out}`);
