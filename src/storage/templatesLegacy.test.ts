// Template versions stored as JSON templates (before templates became text) are read as text
// templates that render the same; a stale built-in is replaced by the current one; nothing of
// the user's is lost or rewritten.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeStudioDB, openStudioDB } from './db.ts';
import type { TemplateVersion } from '../core/records.ts';
import { listTemplateVersions } from './templates.ts';
import { BUILTIN_TEMPLATES, checkTemplate, renderContext, type LegacyPromptTemplate, type PromptTemplate } from '../core/templates/index.ts';
import { legacyContext } from '../core/templates/legacy.fixture.ts';
import { SYSTEM_PROMPT_FIELDS } from '../core/schema/types.ts';

beforeEach(async () => {
  await closeStudioDB();
  globalThis.indexedDB = new IDBFactory();
});
afterEach(async () => {
  await closeStudioDB();
});

const OLD: LegacyPromptTemplate = {
  version: 'v4',
  description: 'a user version',
  preamble: 'Be the {{domain}} box. {{unknown}} stays.',
  sections: SYSTEM_PROMPT_FIELDS.map((field) => ({ field, heading: `[${field}]` })),
  closing: 'No chatter.',
  historyTurn: '<|action|>{{index}}: {{action}}<|observation|>{{observation}}<|end_turn|>\n',
  currentAction: '<|action|>{{index}}: {{action}}<|observation|>',
  targetOpen: '<predicted_observation>\n',
  targetClose: '\n</predicted_observation>',
};
const sample = {
  domain: 'os',
  systemPrompt: { task_description: 'open {% the %} file', action_space: 'click', initial_state: '', demonstrations: '', simulation_instruction: 'be exact' },
  history: [{ action: 'a', observation: 'b' }],
  action: 'c',
};

describe('template versions stored as JSON', () => {
  it('are read as text templates that render what they rendered, and the stored record is kept', async () => {
    const db = await openStudioDB();
    const stored = {
      version: 'v4',
      parent: 'v2',
      note: 'mine',
      createdAt: 5,
      builtin: false,
      template: OLD as unknown as PromptTemplate,
    } satisfies TemplateVersion;
    await db.put('templates', stored);
    // A built-in as an older app stored it (JSON): replaced by the current text one.
    await db.put('templates', {
      version: 'v0',
      parent: null,
      note: 'built-in: old',
      createdAt: 0,
      builtin: true,
      template: { ...OLD, version: 'v0' } as unknown as PromptTemplate,
    });
    const versions = await listTemplateVersions();
    expect(versions.map((v) => v.version)).toEqual(['v0', 'v1', 'v2', 'v4', 'compact']);
    const v4 = versions.find((v) => v.version === 'v4')!;
    expect(v4).toMatchObject({ parent: 'v2', note: 'mine', createdAt: 5, builtin: false });
    expect(typeof v4.template.text).toBe('string');
    expect(checkTemplate(v4.template)).toEqual([]);
    expect(renderContext(v4.template, sample)).toBe(legacyContext(OLD, sample));
    expect(versions.find((v) => v.version === 'v0')!.template).toEqual(BUILTIN_TEMPLATES.v0);
    // Reading converts; the user's record stays as it was written.
    expect((await db.get('templates', 'v4'))!.template).toEqual(OLD);
  });
});
