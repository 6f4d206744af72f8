// Measures what each task family's imitation needs of an agent run's budgets with a fresh preset
// policy at the defaults (src/train/agent/budgets.ts's FAMILY_BUDGETS) and prints the table in
// that file's form, so a change of a family's actions or goals is copied over from here:
//
//   npx tsx --import ./bin/raw-hook.mjs scripts/family-budgets.ts [--train-tasks N]
//
// About a minute on two cores: the long episodes of web, os and android make large tokenizer corpora.
import { parseArgs } from 'node:util';
import type { KnownDomain } from '../src/core/schema/types.ts';
import { TASK_DOMAINS, taskFamilies } from '../src/envs/tasks/index.ts';
import { FAMILY_BUDGETS, presetPolicyBudgets } from '../src/train/agent/budgets.ts';
import { AGENT_DEFAULTS } from '../src/train/agent/run.ts';

const { values } = parseArgs({ options: { 'train-tasks': { type: 'string' } } });
const trainTasks = Number(values['train-tasks'] ?? AGENT_DEFAULTS.trainTasks);
if (!Number.isSafeInteger(trainTasks) || trainTasks < 1) throw new Error(`--train-tasks: a whole number ≥ 1, not '${values['train-tasks']}'`);
const lines: string[] = [];
let changed = 0;
for (const domain of Object.keys(TASK_DOMAINS) as KnownDomain[])
  for (const family of taskFamilies(domain)) {
    const need = presetPolicyBudgets({ domain, families: [family], trainTasks, vocabSize: AGENT_DEFAULTS.vocabSize, layout: AGENT_DEFAULTS.layout });
    const key = `${domain}/${family}`;
    const was = FAMILY_BUDGETS[key];
    const same = was?.action === need.action.tokens && was?.prompt === need.prompt.tokens;
    if (!same) changed++;
    lines.push(
      `  '${key}': { action: ${need.action.tokens}, prompt: ${need.prompt.tokens} },${same ? '' : ` // was ${was ? `${was.action}, ${was.prompt}` : 'absent'}`}`,
    );
  }
console.log(`export const FAMILY_BUDGETS: Readonly<Record<string, { action: number; prompt: number }>> = {\n${lines.join('\n')}\n};`);
console.error(`${lines.length} families at ${trainTasks} train tasks; ${changed} differ from the table in src/train/agent/budgets.ts`);
