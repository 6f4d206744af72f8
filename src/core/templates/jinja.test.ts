// The template language: names used (with lines), unknown names, syntax problems with lines,
// and the layout a text template gives the fitter (prose, fields, turns, action).
import { describe, expect, it } from 'vitest';
import { emptySystemPrompt } from '../schema/types.ts';
import { Tokenizer } from '../tokenizer/index.ts';
import type { TurnSample } from '../turns/index.ts';
import {
  checkTemplateText,
  placeholderNames,
  placeholderUses,
  renderProblems,
  renderSample,
  renderSystem,
  TARGET_CLOSE,
  TARGET_OPEN,
  type PromptTemplate,
} from './index.ts';
import { fitTurn } from './fit.ts';
import { syntaxProblems } from './jinja.ts';

const free = `<|system|>
You simulate {{ domain }}. Free prose between fields.
{% if action_space %}
Tools: {{ action_space }}
{% endif %}
More prose; {{ initial_state }} inline.
{% set sep = "\\n" %}
{% for turn in history %}
<|action|>{{ turn.action }}<|observation|>{{ turn.observation }}<|end_turn|>{{ sep }}{% endfor %}
<|action|>{{ action }} (step {{ step }})<|observation|>

`;
const T: PromptTemplate = { version: 'free', description: '', text: free, targetOpen: TARGET_OPEN, targetClose: TARGET_CLOSE };
const sample: TurnSample = {
  trajectoryId: 't',
  domain: 'web',
  turnIndex: 1,
  systemPrompt: { ...emptySystemPrompt(), action_space: 'click, type', initial_state: 'a page' },
  history: [{ action: 'click', observation: 'ok' }],
  action: 'type x',
  targetObservation: 'done',
};

describe('the template language', () => {
  it('names the variables a text uses, with lines, leaving out its own bindings, attributes and filters', () => {
    expect(placeholderNames(free)).toEqual(['domain', 'action_space', 'initial_state', 'history', 'action', 'step']);
    expect(placeholderUses('a\n{{ x | upper }} {{ turn.y }}').map((u) => [u.name, u.line])).toEqual([
      ['x', 2],
      ['turn', 2],
    ]);
  });
  it('reports unknown names and syntax problems with their line', () => {
    expect(checkTemplateText(free)).toEqual([]);
    const p = checkTemplateText(free.replace('{{ step }}', '{{ stpe }}'));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ line: 10, message: expect.stringMatching(/^unknown variable "stpe"/) });
    expect(syntaxProblems('a\nb {{ x\nc')).toEqual([{ line: 2, column: 3, message: '{{ is never closed' }]);
    expect(syntaxProblems('{% for t in history %}\n{% endif %}')[0]).toMatchObject({ line: 2, message: expect.stringContaining('{% endfor %} was expected') });
    expect(syntaxProblems('{{ a b c }}')[0].line).toBe(1);
    expect(checkTemplateText('no loop {{ action }}')[0].message).toMatch(/never shows the history/);
  });
  it('renders free prose, inline fields and the turn layout', () => {
    const r = renderSample(T, sample);
    expect(r.text).toBe(
      '<|system|>\nYou simulate web. Free prose between fields.\nTools: click, type\nMore prose; a page inline.\n<|action|>click<|observation|>ok<|end_turn|>\n<|action|>type x (step 2)<|observation|>\n' +
        TARGET_OPEN +
        'done' +
        TARGET_CLOSE,
    );
    expect(renderSystem(T, sample)).toBe('You simulate web. Free prose between fields.\nTools: click, type\nMore prose; a page inline.');
  });
  it('lets the fitter keep the action and the newest turn and leave out prose that does not fit', () => {
    const tok = new Tokenizer([]);
    const full = tok.encode(renderSample(T, sample).text, { allowSpecial: true }).length;
    expect(tok.decode(fitTurn(tok, T, sample, { budget: full }).ids)).toBe(renderSample(T, sample).text);
    // The action space goes first (lowest priority); then the template's prose.
    expect(tok.decode(fitTurn(tok, T, sample, { budget: full - 20 }).ids)).not.toContain('Tools:');
    // The largest budget that leaves the opening prose out still has the newest turn and the action.
    let budget = full;
    while (tok.decode(fitTurn(tok, T, sample, { budget }).ids).includes('Free prose')) budget--;
    const f = fitTurn(tok, T, sample, { budget });
    const text = tok.decode(f.ids);
    expect(f.ids.length).toBeLessThanOrEqual(budget);
    expect(text).toContain('<|action|>click<|observation|>ok<|end_turn|>');
    expect(text).toContain('<|action|>type x (step 2)<|observation|>');
    expect(text).not.toContain('Free prose');
  });
  it('names the samples a template fails to render', () => {
    const text = free.replace(
      '{{ action }}',
      "{% if domain == 'os' %}{{ action | upper }}{% elif domain == 'search' %}{{ raise_exception('no search') }}{% else %}{{ action }}{% endif %}",
    );
    const t = { ...T, text };
    expect(checkTemplateText(text)).toEqual([]);
    expect(renderProblems(t, [sample, { ...sample, domain: 'os', trajectoryId: 'o' }, { ...sample, domain: 'search', trajectoryId: 's' }])).toEqual([
      'sample o turn 2 (os): the template changes or moves a value of the sample (filters and slices on the fields, the history and the action are not supported)',
      'sample s turn 2 (search): no search',
    ]);
  });
});
