// The editor's draft persisted by an older app was JSON of a template: it is read back as text.
import { describe, expect, it } from 'vitest';
import { renderContext } from '../../core/templates/index.ts';
import { legacyContext } from '../../core/templates/legacy.fixture.ts';
import { migrateDraft } from './templates.ts';

const body = {
  description: 'draft',
  preamble: 'Be {{domain}}.',
  sections: [{ field: 'task_description' as const, heading: 'Task' }],
  closing: '',
  historyTurn: '<|action|>{{action}}<|observation|>{{observation}}<|end_turn|>',
  currentAction: '<|action|>{{action}}<|observation|>',
  targetOpen: '<predicted_observation>\n',
  targetClose: '\n</predicted_observation>',
};

describe('persisted template drafts', () => {
  it('turns a JSON draft into the text that renders the same, and drops an unreadable one', () => {
    const migrated = migrateDraft({ draft: { base: 'v1', text: JSON.stringify(body, null, 2) }, stages: {} }, 1);
    expect(migrated.draft).toMatchObject({ base: 'v1', domain: null });
    const sample = {
      domain: 'os',
      systemPrompt: { task_description: 'x', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' },
      history: [],
      action: 'a',
    };
    expect(renderContext({ ...body, version: 'd', text: migrated.draft!.text }, sample)).toBe(legacyContext({ ...body, version: 'd' }, sample));
    expect(migrateDraft({ draft: { base: 'v0', text: '{ not json' } }, 1).draft).toBeNull();
    expect(migrateDraft({ draft: { base: 'v0', text: '{{ action }}' } }, 2).draft).toEqual({ base: 'v0', text: '{{ action }}' });
  });
});
