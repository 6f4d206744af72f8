// Budgets of an agent run: what the run's own data needs (policyBudgets), the per-family table the
// CLI and the Sim RL form start from (FAMILY_BUDGETS), and the budgets offered from it.
import { describe, expect, it } from 'vitest';
import type { KnownDomain } from '../../core/schema/types.ts';
import { probedTaskFamilies, TASK_DOMAINS, taskFamilies } from '../../envs/tasks/index.ts';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { FAMILY_BUDGETS, FAMILY_IMITATION, familyBudgets, familyNeeds, presetPolicyBudgets } from './budgets.ts';
import { AGENT_DEFAULTS, AgentSession } from './run.ts';

const DOMAINS = Object.keys(TASK_DOMAINS) as KnownDomain[];
const measure = (domain: KnownDomain, families: string[], trainTasks = 1024) =>
  presetPolicyBudgets({ domain, families, trainTasks, vocabSize: AGENT_DEFAULTS.vocabSize, layout: AGENT_DEFAULTS.layout });

describe('agent run budgets', () => {
  it('the table has every family; the families with a simulated check measure as it says', () => {
    const all = DOMAINS.flatMap((d) => taskFamilies(d).map((f) => `${d}/${f}`));
    expect(Object.keys(FAMILY_BUDGETS).sort()).toEqual(all.sort());
    // The others take about a minute (scripts/family-budgets.ts measures every family).
    for (const d of DOMAINS)
      for (const f of probedTaskFamilies(d)) {
        const need = measure(d, [f]);
        expect({ family: `${d}/${f}`, action: need.action.tokens, prompt: need.prompt.tokens }).toEqual({
          family: `${d}/${f}`,
          ...FAMILY_BUDGETS[`${d}/${f}`],
        });
        expect(need.action.source).toMatch(new RegExp(`^${d}/${f}/\\d+$`));
      }
  });

  it('offers budgets that hold every family’s actions and goals; the terminal’s first family keeps the shape of 64 and 12', () => {
    for (const [key, need] of Object.entries(FAMILY_BUDGETS)) {
      const [domain, family] = key.split('/');
      const b = familyBudgets(domain, [family]);
      expect(b.maxNewTokens, key).toBeGreaterThanOrEqual(need.action);
      expect(b.T - b.maxNewTokens + 1, key).toBeGreaterThanOrEqual(need.prompt);
      expect(b.T % 32, key).toBe(0);
    }
    expect(familyBudgets('terminal', ['write_word'])).toEqual({ T: 64, maxNewTokens: 12, sftSteps: 400 });
    expect(familyBudgets('mcp', ['write_file'])).toEqual({ T: 96, maxNewTokens: 42, sftSteps: 2000 });
    // Several families: the most each needs, each named by its family.
    expect(familyNeeds('mcp', ['write_file', 'add_event', 'add_todo'])).toEqual({
      action: { tokens: 51, family: 'add_event' },
      prompt: { tokens: 54, family: 'add_event' },
    });
    // The imitation steps: the slowest family's (add_event is at the floor).
    expect(familyBudgets('mcp', ['write_file', 'add_event'])).toEqual({ T: 128, maxNewTokens: 51, sftSteps: 2000 });
    expect(familyBudgets('mcp', ['add_event'])).toEqual({ T: 128, maxNewTokens: 51, sftSteps: 400 });
    expect(familyBudgets('swe', ['write_function'])).toEqual({ T: 96, maxNewTokens: 31, sftSteps: 1000 });
    expect(familyBudgets('swe', ['write_function', 'fix_bug']).sftSteps).toBe(1000);
    expect(familyBudgets('swe', ['fix_bug']).sftSteps).toBe(400);
    for (const key of Object.keys(FAMILY_IMITATION)) expect(FAMILY_BUDGETS[key], key).toBeDefined();
    // Nothing known: the floor.
    expect(familyNeeds('mcp', ['no_such'])).toBeNull();
    expect(familyBudgets('mcp', [])).toEqual({ T: 64, maxNewTokens: 12, sftSteps: 400 });
  });

  it('a run at the measured budgets opens past its checks; a token less of context is refused', async () => {
    const host = { rt: {} as GpuRuntime, log: () => {}, metric: () => {} };
    const spec = { ...AGENT_DEFAULTS, domain: 'mcp' as const, families: ['write_file'], evalTasks: 2, maxNewTokens: 42 };
    const short = await AgentSession.open({ ...spec, T: 93 }, host).catch((e: Error) => e);
    expect((short as Error).message).toMatch(/^policy prompt of mcp\/write_file\/\d+ step \d: the goal and target take 53 tokens, more than the budget of 52/);
    const action = await AgentSession.open({ ...spec, T: 94, maxNewTokens: 41 }, host).catch((e: Error) => e);
    expect((action as Error).message).toMatch(/^the longest action to imitate \(mcp\/write_file\/\d+ step 0\) takes 42 tokens, more than the 41/);
    // At 94 and 42 the checks pass: what fails next is the GPU this test does not give it.
    const fits = await AgentSession.open({ ...spec, T: 94 }, host).catch((e: Error) => e);
    expect((fits as Error).message).not.toMatch(/tokens|budget/);
  });
});
