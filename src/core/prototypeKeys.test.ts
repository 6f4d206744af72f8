// Domain names and ids that are also Object.prototype's keys must behave like any other name:
// no exception, correct counts, and nothing written onto Object.prototype. The CLI side
// (lwm mask, expand, validate) is in src/cli/commands/prototypeKeys.test.ts.
import { describe, expect, it } from 'vitest';
import { dataset, guardObjectPrototype, jsonl, NAMES, turnsOf } from './prototypeKeys.fixture.ts';
import { importText } from './formats/index.ts';
import { agentInstructDomain } from './formats/agentinstruct.ts';
import { expandTurns, rlPool, splitByTrajectory, summarizeExpansion } from './turns/index.ts';
import { maskStats } from './masking/index.ts';
import { formatOfficial, formatScoreTable, scoreSamples } from './bench/score.ts';
import { localJudge } from './judge/rubric.ts';
import { createLlmJudge } from './judge/llm.ts';
import { judgeSystemPrompt } from './judge/prompt.ts';
import { parseVerdict } from './judge/parse.ts';
import { BUILTIN_TEMPLATES, checkDistribution, checkTemplateText, renderSystem, templateForSample } from './templates/index.ts';
import type { ChatMessage } from './chat.ts';

guardObjectPrototype();

describe('prototype key names as domains and ids', () => {
  it('import (native) keeps every record, with its id and domain as own data', async () => {
    const r = await importText(jsonl(dataset()));
    expect(r.errors).toEqual([]);
    expect(r.trajectories.map((t) => [t.id, t.domain, t.turns.length])).toEqual(NAMES.map((n) => [n, n, turnsOf(n)]));
  });

  it('import (AgentInstruct) accepts ids named after prototype keys and derives their family as domain', async () => {
    expect(agentInstructDomain('constructor_1')).toBe('constructor');
    expect(agentInstructDomain('toString-2')).toBe('tostring');
    expect(agentInstructDomain('__proto___3')).toBeUndefined(); // no family prefix: fallback domain
    const rows = NAMES.map((n) => ({
      id: `${n}_1`,
      conversations: [
        { from: 'human', loss: null, value: 'do it' },
        { from: 'gpt', loss: true, value: 'ls' },
        { from: 'human', loss: null, value: 'a.txt' },
      ],
    }));
    const r = await importText(jsonl(rows), { file: 'x.jsonl' });
    expect(r.errors).toEqual([]);
    expect(r.trajectories).toHaveLength(NAMES.length);
    for (const t of r.trajectories) expect(typeof t.domain).toBe('string');
    expect(r.trajectories[0].domain).toBe('constructor');
  });

  it('import (OpenAI, ShareGPT) with such ids', async () => {
    const openai = NAMES.map((n) => ({
      id: n,
      messages: [
        { role: 'user', content: 'task' },
        { role: 'assistant', content: 'ls' },
        { role: 'user', content: 'a.txt' },
      ],
    }));
    const r1 = await importText(jsonl(openai), { domain: 'constructor' });
    expect(r1.errors).toEqual([]);
    expect(r1.trajectories.map((t) => t.id)).toEqual(NAMES);
    expect(r1.trajectories.every((t) => t.domain === 'constructor')).toBe(true);
    const sharegpt = NAMES.map((n) => ({
      id: n,
      conversations: [
        { from: 'human', value: 'task' },
        { from: 'gpt', value: 'ls' },
        { from: 'human', value: 'a.txt' },
      ],
    }));
    const r2 = await importText(jsonl(sharegpt));
    expect(r2.errors).toEqual([]);
    expect(r2.trajectories.map((t) => t.id)).toEqual(NAMES);
  });

  it('expand, split and RL pool count every domain', () => {
    const ts = dataset();
    expect(expandTurns(ts)).toHaveLength(15);
    const split = splitByTrajectory(ts, { evalFraction: 0.4, seed: 1 });
    expect(split.train.length + split.eval.length).toBe(NAMES.length);
    expect(rlPool(split.train, 1)).toHaveLength(split.train.length);
    const s = summarizeExpansion(ts, { evalFraction: 0.4, seed: 1 });
    expect(Object.keys(s.perDomain).sort()).toEqual([...NAMES].sort());
    for (const n of NAMES) {
      const d = s.perDomain[n];
      expect(d).toMatchObject({ trajectories: 1, samples: turnsOf(n) });
      expect(d.train + d.eval).toBe(turnsOf(n));
    }
    // biome-ignore lint/suspicious/noProto: a domain named __proto__ is a plain key of the output, which is the point
    expect(JSON.parse(JSON.stringify(s)).perDomain.__proto__.samples).toBe(2);
  });

  it('maskStats counts turns per domain', () => {
    const stats = maskStats(dataset());
    expect(stats.overall.total).toBe(15);
    expect(Object.keys(stats.perDomain).sort()).toEqual([...NAMES].sort());
    for (const n of NAMES) expect(stats.perDomain[n].total).toBe(turnsOf(n));
  });

  it('score groups and prints per domain', () => {
    const samples = NAMES.map((n) => ({ domain: n, failed: false, scores: { accuracy: 5 }, total: 5 })) as never;
    const table = scoreSamples(samples);
    expect(table.domains.map((d) => d.domain).sort()).toEqual([...NAMES].sort());
    for (const d of table.domains) expect(d.valid).toBe(1);
    expect(formatScoreTable(table)).toContain('__proto__');
    expect(formatOfficial(table)).toContain('--- Constructor (1/1 valid, 0 failed) ---');
  });
});

describe('judging and templates with prototype key names', () => {
  const input = (domain: string) => ({ domain, history: [], action: 'ls', prediction: 'a.txt b.txt', reference: 'a.txt b.txt' });
  it('the local judge scores samples of such domains', async () => {
    for (const n of NAMES) {
      const v = await localJudge.judge(input(n));
      expect(v.failed).toBe(false);
      if (!v.failed) expect(Number.isFinite(v.total)).toBe(true);
    }
  });
  it('an LLM judge given per-domain prompts uses its own prompt for a domain named constructor', async () => {
    const seen: ChatMessage[][] = [];
    const good = '<verdict>{"scores": {"format": 5, "factuality": 5, "consistency": 5, "realism": 5, "quality": 5}}</verdict>';
    const judge = createLlmJudge({ name: 'j', systemPrompts: { terminal: 'PUBLIC' }, complete: async (m) => (seen.push(m), good) });
    for (const n of NAMES) await judge.judge(input(n));
    expect(seen.map((m) => m[0].content)).toEqual(NAMES.map((n) => judgeSystemPrompt(n)));
  });
  it('a verdict whose scores object carries a __proto__ key still reads its own scores', () => {
    const v = parseVerdict('<verdict>{"scores": {"__proto__": {"format": 1}, "factuality": 4, "consistency": 4, "realism": 4, "quality": 4}}</verdict>');
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.scores.format).not.toBe(1);
  });
  it('template variables named after prototype keys are unknown names, and such a domain renders as itself', () => {
    const text = '{{ constructor }}{{ toString }}{% for turn in history %}{% endfor %}{{ action }}';
    expect(checkTemplateText(text).map((p) => p.message.split(' (')[0])).toEqual(['unknown variable "constructor"', 'unknown variable "toString"']);
    expect(
      renderSystem(BUILTIN_TEMPLATES.v0, {
        domain: 'constructor',
        systemPrompt: { task_description: '', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' },
      }),
    ).toContain('real constructor environment');
  });
  it('a template mix naming a version `constructor` is an unknown version, not a template', () => {
    expect(checkDistribution({ constructor: 1 })[0]).toMatch(/^constructor: no template with this version/);
    expect(() => templateForSample({ toString: 1 }, { trajectoryId: 'constructor', turnIndex: 0 })).toThrow(/not a known template/);
  });
});
