import { describe, expect, it } from 'vitest';
import { DOMAINS } from '../core/schema/types.ts';
import { validateTrajectory } from '../core/schema/index.ts';
import { maskStats } from '../core/masking/index.ts';
import { checkSpanTiling, createEnv, generateTrajectories, knowledgeText, toJsonl, MAX_TURNS, MIN_TURNS } from './index.ts';

const N = 12;
const sets = Object.fromEntries(DOMAINS.map((d) => [d, generateTrajectories(d, N, 5)]));

describe.each(DOMAINS)('generated %s trajectories', (domain) => {
  const ts = sets[domain];
  it('are byte-identical for the same arguments and differ for another seed', () => {
    expect(toJsonl(generateTrajectories(domain, N, 5))).toBe(toJsonl(ts));
    expect(toJsonl(generateTrajectories(domain, N, 6))).not.toBe(toJsonl(ts));
  });
  it('have 3-40 turns, non-empty observations, stable ids and the env source', () => {
    expect(new Set(ts.map((t) => t.id)).size).toBe(N);
    for (const t of ts) {
      expect(t.id).toMatch(new RegExp(`^env-${domain}-5-\\d{5}$`));
      expect(t.source).toEqual({ format: 'env' });
      expect(t.turns.length).toBeGreaterThanOrEqual(MIN_TURNS);
      expect(t.turns.length).toBeLessThanOrEqual(MAX_TURNS);
      for (const turn of t.turns) expect(turn.observation.length).toBeGreaterThan(0);
    }
  });
  it('carry spans that tile every observation exactly', () => {
    for (const t of ts)
      for (const turn of t.turns) {
        expect(checkSpanTiling(turn.observation, turn.metadata!.spans!)).toBeNull();
      }
  });
  it('validate against the trajectory schema', () => {
    for (const t of ts) expect(validateTrajectory(JSON.parse(JSON.stringify(t)))).toEqual([]);
  });
  it('fill all five system-prompt fields and have knowledge text', () => {
    for (const f of ['task_description', 'action_space', 'initial_state', 'demonstrations', 'simulation_instruction'] as const) {
      expect(ts[0].system_prompt[f].length).toBeGreaterThan(10);
    }
    expect(knowledgeText(domain).length).toBeGreaterThan(500);
  });
  it('answer garbage actions with an error observation instead of throwing', () => {
    const env = createEnv(domain);
    env.reset(1);
    for (const a of ['', '(((', 'click(', '{"jsonrpc":', 'rm -rf /', 'x'.repeat(500), 'type(1, "' + String.fromCharCode(92) + 'q")']) {
      const r = env.step(a);
      expect(checkSpanTiling(r.observation, r.spans)).toBeNull();
    }
  });
});

describe('mask categories of generated data', () => {
  it('are reported per domain and no domain is all one category', () => {
    const stats = maskStats(DOMAINS.flatMap((d) => sets[d]));
    for (const d of DOMAINS) {
      const c = stats.perDomain[d];
      expect(c.total).toBeGreaterThan(0);
      expect(Math.max(...Object.values(c.shares))).toBeLessThan(1);
    }
  });
});
