// Importing a folder of DOMAIN/system_prompt.txt files (the public per-domain prompt layout,
// {placeholder} slots) into one template version.
import { describe, expect, it } from 'vitest';
import { emptySystemPrompt } from '../schema/types.ts';
import type { TurnSample } from '../turns/index.ts';
import { BUILTIN_TEMPLATES, checkTemplate, importPromptFolder, renderSample, renderSystem } from './index.ts';

const osPrompt =
  '# Role\nYou are a desktop world model.\n\n## Actions\n{tool_definitions}\n\nJSON looks like {"a": {"b": 1}}; keep {{ and {% and {# and -}\nas they are.\n';
const files = [
  { path: 'prompts/os/system_prompt.txt', text: osPrompt },
  { path: 'prompts/os/judge_system_prompt.txt', text: 'ignored {nothing}' },
  { path: 'prompts/mcp/system_prompt.txt', text: 'Tool world model.\n{demonstrations}\n' },
];
const sample = (domain: string): TurnSample => ({
  trajectoryId: 't',
  domain,
  turnIndex: 1,
  systemPrompt: { ...emptySystemPrompt(), action_space: 'click(x, y)', task_description: 'open the file', demonstrations: 'demo' },
  history: [{ action: 'a', observation: 'b' }],
  action: 'click(1, 2)',
  targetObservation: 'ok',
});

describe('importing a folder of per-domain system prompts', () => {
  it('makes one version with a text per domain; placeholders become fields, literal braces stay literal', () => {
    const r = importPromptFolder(files, BUILTIN_TEMPLATES.v0);
    expect(r.problems).toEqual([]);
    expect(r.domains).toEqual(['mcp', 'os']);
    const t = { ...r.template!, version: 'v3' };
    expect(checkTemplate(t)).toEqual([]);
    const sys = renderSystem(t, sample('os'));
    expect(sys.startsWith(osPrompt.replace('{tool_definitions}', 'click(x, y)').trimEnd())).toBe(true);
    // Fields the prompt does not place follow it, so nothing of the sample is lost.
    expect(sys).toContain('## Task\nopen the file');
    expect(sys.split('click(x, y)')).toHaveLength(2); // placed once, by the prompt
    expect(renderSystem(t, sample('mcp'))).toContain('Tool world model.\ndemo');
    // Other domains render as the base template; the turn layout is the base's.
    expect(renderSample(t, sample('web')).text).toBe(renderSample(BUILTIN_TEMPLATES.v0, sample('web')).text);
    expect(renderSample(t, sample('os')).text).toContain('<|action|>\na\n<|observation|>\nb\n<|end_turn|>\n<|action|>\nclick(1, 2)\n<|observation|>\n');
  });
  it('names the file and line of an unknown placeholder, and other problems', () => {
    const r = importPromptFolder(
      [
        { path: 'x/os/system_prompt.txt', text: 'ok\n\nsee {history_text} here' },
        { path: 'system_prompt.txt', text: 'no domain' },
        { path: 'web/system_prompt.txt', text: '  ' },
      ],
      BUILTIN_TEMPLATES.v0,
    );
    expect(r.template).toBeNull();
    expect(r.problems[0]).toMatch(/^x\/os\/system_prompt\.txt: line 3: unknown placeholder \{history_text\}/);
    expect(r.problems[1]).toMatch(/^system_prompt\.txt: a system_prompt\.txt must sit in a folder named after its domain/);
    expect(r.problems[2]).toBe('web/system_prompt.txt: the file is empty');
    expect(importPromptFolder([{ path: 'a/readme.md', text: 'x' }], BUILTIN_TEMPLATES.v0).problems).toEqual([
      'no DOMAIN/system_prompt.txt files in the folder (1 files read)',
    ]);
  });
});
