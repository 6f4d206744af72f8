// JSON templates (as stored before templates became text) convert into text templates that
// render exactly what the JSON renderer rendered: the old built-ins, and random templates with
// placeholder-like text, Jinja-like text, blank and space-edged strings, on random samples.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SYSTEM_PROMPT_FIELDS, type SystemPrompt, type SystemPromptField } from '../schema/types.ts';
import type { TurnSample } from '../turns/index.ts';
import { checkTemplate, renderContext, renderSample, renderSystem } from './index.ts';
import { fromLegacy, isLegacyTemplate, normalizeTemplate, type LegacyPromptTemplate } from './legacy.ts';
import { legacyContext, legacySystem } from './legacy.fixture.ts';

const OLD_V1: LegacyPromptTemplate = {
  version: 'v1',
  description: 'Explanatory',
  preamble: 'You simulate a {{domain}} environment for an AI agent.',
  sections: SYSTEM_PROMPT_FIELDS.map((field) => ({ field, heading: `${field}:` })),
  closing: 'Keep the output format of the real system.',
  historyTurn: '<|action|>\nStep {{index}}, agent action:\n{{action}}\n<|observation|>\nEnvironment output:\n{{observation}}\n<|end_turn|>\n',
  currentAction: '<|action|>\nStep {{index}}, agent action:\n{{action}}\n<|observation|>\nEnvironment output:\n',
  targetOpen: '<predicted_observation>\n',
  targetClose: '\n</predicted_observation>',
};

const sample: TurnSample = {
  trajectoryId: 't',
  domain: 'terminal',
  turnIndex: 2,
  systemPrompt: {
    task_description: 'Count {{action}} files',
    action_space: 'bash',
    initial_state: '',
    demonstrations: '{% if x %}',
    simulation_instruction: 'be exact',
  },
  history: [
    { action: 'ls', observation: 'a b' },
    { action: '{{observation}}', observation: '' },
  ],
  action: 'wc -l',
  targetObservation: '2',
};

// Text that stresses the conversion: Jinja syntax, placeholders known and unknown, blank lines, edge spaces.
const piece = fc.constantFrom(
  '',
  ' ',
  '\n',
  '\n\n',
  'text',
  '{{domain}}',
  '{{index}}',
  '{{action}}',
  '{{observation}}',
  '{{other}}',
  '{%',
  '%}',
  '{#',
  '#}',
  '}}',
  '{{',
  '-}\n',
  '  {% x',
  '<|action|>',
  '<|observation|>',
  '<|end_turn|>',
  '\t',
);
const str = fc.array(piece, { maxLength: 5 }).map((xs) => xs.join(''));
const field = fc.constantFrom(...SYSTEM_PROMPT_FIELDS);
const legacy: fc.Arbitrary<LegacyPromptTemplate> = fc.record({
  version: fc.constant('vx'),
  description: fc.constant('random'),
  preamble: str,
  sections: fc.uniqueArray(fc.record({ field, heading: str }), { selector: (s) => s.field, maxLength: 5 }),
  closing: str,
  historyTurn: str,
  currentAction: str,
  targetOpen: fc.constant('<predicted_observation>\n'),
  targetClose: fc.constant('\n</predicted_observation>'),
});
const value = fc.oneof(fc.constant(''), str, fc.string({ maxLength: 6 }));
const systemPrompt: fc.Arbitrary<SystemPrompt> = fc.oneof(
  fc.record(Object.fromEntries(SYSTEM_PROMPT_FIELDS.map((f) => [f, value])) as Record<SystemPromptField, fc.Arbitrary<string>>),
  value.map((text) => ({ task_description: '', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '', text })),
);
const turnSample: fc.Arbitrary<TurnSample> = fc.record({
  trajectoryId: fc.constant('r'),
  domain: fc.constantFrom('', 'web', '{{x}}'),
  turnIndex: fc.constant(0),
  systemPrompt,
  history: fc.array(fc.record({ action: value, observation: value }), { maxLength: 3 }),
  action: value,
  targetObservation: value,
});

describe('JSON templates become text templates', () => {
  it('recognises the JSON shape and leaves text templates alone', () => {
    expect(isLegacyTemplate(OLD_V1)).toBe(true);
    const converted = fromLegacy(OLD_V1);
    expect(isLegacyTemplate(converted)).toBe(false);
    expect(normalizeTemplate(converted)).toBe(converted);
    expect(normalizeTemplate(OLD_V1)).toEqual(converted);
    expect(checkTemplate(converted)).toEqual([]);
  });

  it('renders a JSON template exactly as the JSON renderer did', () => {
    const t = fromLegacy(OLD_V1);
    expect(renderContext(t, sample)).toBe(legacyContext(OLD_V1, sample));
    expect(renderSystem(t, sample)).toBe(legacySystem(OLD_V1, sample));
    expect(renderSample(t, sample).text).toBe(legacyContext(OLD_V1, sample) + '<predicted_observation>\n2\n</predicted_observation>');
  });

  it('renders the same on random JSON templates and samples (placeholders, Jinja-like text, blank lines)', () => {
    fc.assert(
      fc.property(legacy, turnSample, (old, s) => {
        const t = fromLegacy(old);
        expect(renderContext(t, s)).toBe(legacyContext(old, s));
        expect(renderSystem(t, s)).toBe(legacySystem(old, s));
      }),
      { numRuns: 400, seed: 16 },
    );
  });
});
