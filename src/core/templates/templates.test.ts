import { describe, expect, it } from 'vitest';
import {
  BUILTIN_TEMPLATES,
  checkDistribution,
  checkTemplate,
  DEFAULT_STAGE_TEMPLATES,
  pickVersion,
  renderChat,
  renderSample,
  renderSystem,
  renderTrajectory,
  segmentWeights,
  templateForSample,
  versionCounts,
} from './index.ts';
import { expandTurns, type TurnSample } from '../turns/index.ts';
import { emptySystemPrompt, type Trajectory } from '../schema/types.ts';

const traj: Trajectory = {
  id: 'term-1',
  domain: 'terminal',
  system_prompt: { ...emptySystemPrompt(), task_description: 'Count the log files.', action_space: 'bash' },
  turns: [
    { action: 'ls /var/log', observation: 'syslog\nauth.log' },
    { action: 'ls /var/log | wc -l', observation: '2' },
    { action: 'echo {{action}}', observation: 'x {{observation}} y' },
  ],
};
const samples = expandTurns([traj]);

describe('built-in templates', () => {
  it('ships v0, v1, v2 and compact, each valid and differently worded', () => {
    expect(Object.keys(BUILTIN_TEMPLATES)).toEqual(['v0', 'v1', 'v2', 'compact']);
    const systems = Object.values(BUILTIN_TEMPLATES).map((t) => {
      expect(checkTemplate(t)).toEqual([]);
      return renderSystem(t, samples[0]);
    });
    expect(new Set(systems).size).toBe(4);
    const texts = Object.values(BUILTIN_TEMPLATES).map((t) => renderSample(t, samples[1]).text);
    expect(new Set(texts).size).toBe(4);
  });
  it('renders only non-empty fields, or the unsplit text', () => {
    const sys = renderSystem(BUILTIN_TEMPLATES.v0, samples[0]);
    expect(sys).toContain('## Task\nCount the log files.');
    expect(sys).toContain('## Actions\nbash');
    expect(sys).not.toContain('## Examples');
    expect(sys).toContain('real terminal environment');
    const text = renderSystem(BUILTIN_TEMPLATES.v1, { ...samples[0], systemPrompt: { ...emptySystemPrompt(), text: 'RAW PROMPT' } });
    expect(text).toContain('RAW PROMPT');
    expect(text).not.toContain('What the agent is trying to do');
  });
});

describe('renderSample', () => {
  it('knows the exact range of the target observation, for every template and turn', () => {
    for (const t of Object.values(BUILTIN_TEMPLATES)) {
      for (const s of samples) {
        const r = renderSample(t, s);
        expect(r.text.slice(r.targetStart, r.targetEnd)).toBe(s.targetObservation);
        expect(r.segments.map((x) => x.text).join('')).toBe(r.text);
        expect(r.text.slice(r.promptEnd, r.targetStart)).toBe(t.targetOpen);
        expect(r.text.slice(r.targetEnd)).toBe(t.targetClose);
      }
    }
  });
  it('lays out history then the current action, numbering turns from 1', () => {
    const r = renderSample(BUILTIN_TEMPLATES.v2, samples[2]);
    const prompt = r.text.slice(0, r.promptEnd);
    expect(prompt.indexOf('ls /var/log\n')).toBeLessThan(prompt.indexOf('ls /var/log | wc -l'));
    expect(prompt).toContain('<|action|> #3\necho {{action}}\n<|observation|> #3\n');
    expect(prompt).toContain('<|observation|> #1\nsyslog\nauth.log\n<|end_turn|>');
  });
  it('leaves placeholder-like text inside values alone and is pure', () => {
    const r1 = renderSample(BUILTIN_TEMPLATES.v0, samples[2]);
    const r2 = renderSample(BUILTIN_TEMPLATES.v0, structuredClone(samples[2]) as TurnSample);
    expect(r1).toEqual(r2);
    expect(r1.text).toContain('echo {{action}}');
    expect(r1.text.slice(r1.targetStart, r1.targetEnd)).toBe('x {{observation}} y');
    expect(r1.text).toContain('{% raw %}'.slice(0, 0) + 'x {{observation}} y');
  });
  it('puts a reasoning trace before the prediction and weights segments', () => {
    const r = renderSample(BUILTIN_TEMPLATES.v1, samples[1], { reasoning: 'two files were listed' });
    expect(r.text.slice(r.promptEnd)).toBe('<think>\ntwo files were listed\n</think>\n<predicted_observation>\n2\n</predicted_observation>');
    expect(r.text.slice(r.targetStart, r.targetEnd)).toBe('2');
    const w = segmentWeights(r, 0.6);
    expect(w.map((x) => x.weight)).toEqual([0, 0, 0, 0.6, 0.6]);
  });
  it('renders chat messages with actions as user turns and observations as assistant turns', () => {
    const c = renderChat(BUILTIN_TEMPLATES.v0, samples[1]);
    expect(c.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(c.prompt[2].content).toBe('syslog\nauth.log');
    expect(c.completion.content).toBe('<predicted_observation>\n2\n</predicted_observation>');
  });
  it('flattens a whole trajectory for CPT', () => {
    const text = renderTrajectory(BUILTIN_TEMPLATES.v0, traj);
    expect(text.startsWith('<|system|>\n')).toBe(true);
    expect(text.match(/<\|end_turn\|>/g)).toHaveLength(3);
  });
});

describe('stage template distributions', () => {
  it('defaults are valid and SFT mixes all four', () => {
    for (const d of Object.values(DEFAULT_STAGE_TEMPLATES)) expect(checkDistribution(d)).toEqual([]);
    expect(Object.keys(DEFAULT_STAGE_TEMPLATES.sft).sort()).toEqual(['compact', 'v0', 'v1', 'v2']);
  });
  it('picks versions in proportion to their weights', () => {
    expect(pickVersion({ v0: 1, v1: 3 }, 0)).toBe('v0');
    expect(pickVersion({ v0: 1, v1: 3 }, 0.2499)).toBe('v0');
    expect(pickVersion({ v0: 1, v1: 3 }, 0.25)).toBe('v1');
    expect(pickVersion({ v1: 3, v0: 1 }, 0.25)).toBe('v1');
    expect(pickVersion({ v0: 0, v1: 1 }, 0)).toBe('v1');
    const counts: Record<string, number> = { v0: 0, v1: 0, v2: 0, compact: 0 };
    for (let i = 0; i < 3000; i++) counts[templateForSample(DEFAULT_STAGE_TEMPLATES.sft, { trajectoryId: `t${i}`, turnIndex: 0 }, 1).version]++;
    expect(counts.v0 / 3000).toBeCloseTo(0.3, 1);
    expect(counts.v1 / 3000).toBeCloseTo(0.2, 1);
    expect(counts.compact / 3000).toBeCloseTo(0.3, 1);
  });
  it('counts the versions the draws give a set of samples (what an SFT run logs)', () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ trajectoryId: `t${i}`, turnIndex: 0 }));
    const counts = versionCounts({ v1: 0, v0: 1, v3: 1 }, many, 1);
    expect(Object.keys(counts)).toEqual(['v0', 'v3']);
    expect(counts.v0 + counts.v3).toBe(200);
    expect(counts.v3).toBe(
      many.filter((x) => templateForSample({ v0: 1, v3: 1 }, x, 1, { ...BUILTIN_TEMPLATES, v3: BUILTIN_TEMPLATES.v2 }) === BUILTIN_TEMPLATES.v2).length,
    );
  });
  it('is reproducible per sample and seed', () => {
    const a = templateForSample(DEFAULT_STAGE_TEMPLATES.sft, samples[1], 5).version;
    expect(templateForSample(DEFAULT_STAGE_TEMPLATES.sft, samples[1], 5).version).toBe(a);
  });
  it('reports unknown versions and unusable weights', () => {
    expect(checkDistribution({ v9: 1 })).toEqual(['v9: no template with this version (known: v0, v1, v2, compact)']);
    expect(checkDistribution({ v0: 0 })).toEqual(['the weights sum to 0; give at least one template a positive weight']);
    expect(checkDistribution({ v0: -1, v1: 1 })[0]).toMatch(/finite number ≥ 0/);
    expect(() => pickVersion({}, 0.5)).toThrow(/no positive weight/);
  });
  it('checks custom templates', () => {
    const bad = { ...BUILTIN_TEMPLATES.v0, text: 'Hello {{ domian }}\n{{ action }}', domains: { web: '{% if action %}' } };
    expect(checkTemplate(bad)).toEqual([
      'text: line 1: unknown variable "domian" (known: domain, task_description, action_space, initial_state, demonstrations, simulation_instruction, system_text, history, action, step)',
      'text: line 1: the template never shows the history: add {% for turn in history %}…{% endfor %}',
      'domains/web: line 1: {% if %} is never closed with {% endif %}',
    ]);
  });
});
