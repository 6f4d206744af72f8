// A checkpoint written before templates became text keeps its JSON templates in its spec: they
// are read as text templates that render what they rendered, and the trained one is still found.
import { describe, expect, it } from 'vitest';
import { trainedTemplates } from './checkpoint.ts';
import { renderContext, type LegacyPromptTemplate } from '../core/templates/index.ts';
import { legacyContext } from '../core/templates/legacy.fixture.ts';

const v5: LegacyPromptTemplate = {
  version: 'v5',
  description: 'trained with',
  preamble: 'Simulate {{domain}}.',
  sections: [{ field: 'task_description', heading: 'TASK' }],
  closing: '',
  historyTurn: '<|action|>{{action}}<|observation|>{{observation}}<|end_turn|>',
  currentAction: '<|action|>{{action}}<|observation|>',
  targetOpen: '<predicted_observation>\n',
  targetClose: '\n</predicted_observation>',
};

describe('a checkpoint with JSON templates', () => {
  it('reads them as text templates and keeps the trained version', () => {
    const r = trainedTemplates({ extraMetadata: { spec: JSON.stringify({ templates: { v5: 2, v0: 1 }, templateSet: { v5 } }) } });
    expect(r.trained).toBe('v5');
    expect(typeof r.templates.v5.text).toBe('string');
    const sample = {
      domain: 'web',
      systemPrompt: { task_description: 'find it', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' },
      history: [{ action: 'a', observation: 'b' }],
      action: 'c',
    };
    expect(renderContext(r.templates.v5, sample)).toBe(legacyContext(v5, sample));
  });
});
