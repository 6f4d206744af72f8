// The budgets of an agent run (docs/method.md §13): how many tokens its longest action to imitate
// and its longest goal take, so that the action budget (maxNewTokens) and the policy context (T)
// can hold them; and, per task family, what a fresh preset policy needs, measured, so that the
// CLI and the Sim RL form offer budgets a run fits.
import type { KnownDomain } from '../../core/schema/types.ts';
import { barePromptTokens, listTasks, policyTarget, type PolicyLayout, type PolicySample } from '../../envs/tasks/index.ts';
import { ourCodec, type PolicyCodec } from './codec.ts';
import { imitationSamples, policyTokenizer } from './samples.ts';

/** The sample that needs the most tokens of a budget, and how many. */
export interface BudgetNeed {
  tokens: number;
  source: string;
  step: number;
}

/**
 * What a policy's imitation needs of a run's budgets: `action`, the longest action to imitate with
 * its end (the action budget, maxNewTokens, must hold it); `prompt`, the longest bare prompt (the
 * goal, or the task and action space, with the end-of-action token) that the policy context less
 * the action budget, T − maxNewTokens + 1, must hold.
 */
export function policyBudgets(samples: readonly PolicySample[], codec: PolicyCodec, layout: PolicyLayout): { action: BudgetNeed; prompt: BudgetNeed } {
  return {
    action: mostTokens(samples, (s) => codec.encodeParts(policyTarget(s, codec.format)).length),
    prompt: mostTokens(samples, (s) => barePromptTokens({ ...s, target: '' }, codec, layout, codec.format)),
  };
}

/** The sample with the most tokens by `size` (the first of equals), and that count. */
export function mostTokens(samples: readonly PolicySample[], size: (s: PolicySample, i: number) => number): BudgetNeed {
  let need: BudgetNeed = { tokens: 0, source: '', step: 0 };
  samples.forEach((s, i) => {
    const tokens = size(s, i);
    if (tokens > need.tokens) need = { tokens, source: s.source, step: s.step };
  });
  return need;
}

/**
 * policyBudgets for a fresh policy of a preset (the Sim RL form's check, before anything runs):
 * the run's train tasks and imitation samples, and the tokenizer it would build from them.
 */
export function presetPolicyBudgets(spec: { domain: KnownDomain; families: readonly string[]; trainTasks: number; vocabSize: number; layout: PolicyLayout }): {
  action: BudgetNeed;
  prompt: BudgetNeed;
} {
  const tasks = listTasks({ split: 'train', count: spec.trainTasks, domains: [spec.domain], families: [...spec.families] });
  const samples = imitationSamples(tasks);
  return policyBudgets(samples, ourCodec(policyTokenizer(samples, spec.vocabSize, spec.layout)), spec.layout);
}

/**
 * The least action budget, policy context and imitation steps a run starts with (AGENT_DEFAULTS'):
 * what terminal/write_word, the easiest family, needs (a bench policy copies the goal's word and
 * file on every held-out task after 400 imitation steps, docs/method.md §13).
 */
export const BUDGET_FLOOR = { maxNewTokens: 12, T: 64, sftSteps: 400 } as const;

/**
 * Imitation steps a fresh bench policy needs on a family, at the default learning rate (3e-3),
 * where the floor's 400 are too few; measured (docs/method.md §13). Learning to copy a goal's
 * values into the action comes at once, after a plateau whose length moves with the seed: on
 * mcp/write_file (a JSON-RPC call whose path and text the goal names) the loss sits near 0.2
 * for hundreds of steps, the policy writing the call with a fixed file name and object word,
 * then drops, and every held-out call is right: from 450 to past 1,200 steps across seeds, and
 * past 1,200 on the GPU trainer (scripts/agent_imitation.py measures it in minutes). 400 steps
 * gave none of 32 held-out tasks.
 */
export const FAMILY_IMITATION: Readonly<Record<string, number>> = {
  'mcp/write_file': 2000,
  // swe/write_function (a `create` of a file with a function the goal names): at 400 steps 0 to 3
  // of 64 held-out first actions were right across four seeds; over 800 steps all four copied by
  // step 500 to 600, and over 2,000 two seeds by 600 to 800; our GPU trainer's 1,000 solved 64 of 64.
  'swe/write_function': 1000,
};

/**
 * What each family's imitation needs with a fresh preset policy at the defaults (1,024 train
 * tasks, a 1,024-token vocabulary, the compact layout), as presetPolicyBudgets measures it:
 * `action`, its longest action with the end-of-action token; `prompt`, its longest goal with
 * that token. scripts/family-budgets.ts measures them all again and prints this table (about a
 * minute: the long episodes of web, os and android make large tokenizer corpora); budgets.test.ts
 * measures again the families with a simulated check.
 */
export const FAMILY_BUDGETS: Readonly<Record<string, { action: number; prompt: number }>> = {
  'terminal/write_word': { action: 7, prompt: 40 },
  'terminal/make_dir': { action: 5, prompt: 40 },
  'terminal/append_line': { action: 13, prompt: 54 },
  'terminal/count_lines': { action: 18, prompt: 60 },
  'terminal/copy_file': { action: 13, prompt: 57 },
  'terminal/sort_unique': { action: 15, prompt: 55 },
  'terminal/grep_to_dir': { action: 18, prompt: 64 },
  'terminal/record_env': { action: 17, prompt: 58 },
  'mcp/write_file': { action: 42, prompt: 53 },
  'mcp/create_note': { action: 38, prompt: 45 },
  'mcp/add_event': { action: 51, prompt: 54 },
  'mcp/add_todo': { action: 38, prompt: 42 },
  'mcp/compute_note': { action: 45, prompt: 50 },
  'mcp/complete_todo': { action: 32, prompt: 48 },
  'mcp/schedule_after': { action: 51, prompt: 52 },
  'search/open_page': { action: 18, prompt: 41 },
  'search/lookup': { action: 18, prompt: 55 },
  'search/compare': { action: 11, prompt: 46 },
  'os/set_volume': { action: 8, prompt: 40 },
  'os/new_folder': { action: 8, prompt: 40 },
  'os/edit_file': { action: 22, prompt: 55 },
  'swe/write_function': { action: 31, prompt: 54 },
  'swe/fix_bug': { action: 39, prompt: 53 },
  'android/set_alarm': { action: 8, prompt: 38 },
  'android/add_contact': { action: 14, prompt: 47 },
  'android/send_message': { action: 12, prompt: 40 },
  'web/add_to_cart': { action: 10, prompt: 40 },
  'web/buy': { action: 11, prompt: 49 },
};

/** The families' most demanding needs in FAMILY_BUDGETS, each with the family it comes from (null: none of them is there). */
export function familyNeeds(
  domain: string,
  families: readonly string[],
): { action: { tokens: number; family: string }; prompt: { tokens: number; family: string } } | null {
  let out: ReturnType<typeof familyNeeds> = null;
  for (const family of families) {
    const b = FAMILY_BUDGETS[`${domain}/${family}`];
    if (!b) continue;
    out ??= { action: { tokens: b.action, family }, prompt: { tokens: b.prompt, family } };
    if (b.action > out.action.tokens) out.action = { tokens: b.action, family };
    if (b.prompt > out.prompt.tokens) out.prompt = { tokens: b.prompt, family };
  }
  return out;
}

/**
 * The budgets a fresh preset policy's run on these families starts with: an action budget that
 * holds their longest action (at least 12), and a policy context that holds their longest goal
 * beside it (T − maxNewTokens + 1 ≥ prompt; at least 64, in steps of 32). The need of the
 * families together, with their shared tokenizer, can differ by a token or two: the run checks
 * its own when it opens. And the imitation steps their slowest family needs (FAMILY_IMITATION; at least 400).
 */
export function familyBudgets(domain: string, families: readonly string[]): { T: number; maxNewTokens: number; sftSteps: number } {
  const need = familyNeeds(domain, families);
  const maxNewTokens = Math.max(BUDGET_FLOOR.maxNewTokens, need?.action.tokens ?? 0);
  const prompt = need?.prompt.tokens ?? 0;
  const sftSteps = Math.max(BUDGET_FLOOR.sftSteps, ...families.map((f) => FAMILY_IMITATION[`${domain}/${f}`] ?? 0));
  return { maxNewTokens, T: Math.max(BUDGET_FLOOR.T, Math.ceil((prompt + maxNewTokens - 1) / 32) * 32), sftSteps };
}
