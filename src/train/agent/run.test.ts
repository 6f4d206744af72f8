// A run's budgets are checked before any GPU work: an action longer than the action budget, or a
// prompt that does not fit beside it, is refused with the value that fits and where to set it.
import { describe, expect, it } from 'vitest';
import type { GpuRuntime } from '../../gpu/runtime.ts';
import { AGENT_DEFAULTS, AgentSession, type AgentHost } from './run.ts';

const host: AgentHost = {
  // Never reached: the checks come first.
  rt: {} as GpuRuntime,
  log: () => {},
  metric: () => {},
};
const spec = { ...AGENT_DEFAULTS, domain: 'mcp' as const, families: ['write_file'], trainTasks: 16, evalTasks: 2 };

describe('a run whose actions or prompts do not fit', () => {
  it("names the longest action and the action budget it needs (the tool server's JSON-RPC calls at the defaults)", async () => {
    const err = await AgentSession.open(spec, host).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const m =
      /^the longest action to imitate \(mcp\/write_file\/\d+ step 0\) takes (\d+) tokens, more than the 12 an action may take: raise the action budget to at least (\d+) \(--max-new-tokens; Action tokens in the Sim RL panel\)$/.exec(
        (err as Error).message,
      );
    expect(m, (err as Error).message).not.toBeNull();
    expect(m![1]).toBe(m![2]);
    const n = Number(m![1]);
    expect(n).toBeGreaterThan(12);
    // With that budget the action fits, and the prompt beside it does not at the default context of 64.
    const prompt = await AgentSession.open({ ...spec, maxNewTokens: n }, host).catch((e: Error) => e);
    expect((prompt as Error).message).toMatch(
      new RegExp(
        `^policy prompt of mcp/write_file/\\d+ step 0: the goal and target take \\d+ tokens, more than the budget of ${64 - n + 1}, which is the policy context less the action budget \\(64 − ${n} \\+ 1\\): raise the policy context \\(--tokens; Policy context \\(T\\) in the Sim RL panel\\)$`,
      ),
    );
  });
});
