// lwm_template.json, the training template an ONNX export of ours keeps: written and read back, and
// a broken one refused at load with the file, the text and the line at fault.
import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { templateFileBytes, templateFromJson, TemplateFileError } from './templateFile.ts';

const WHERE = 'export/lwm_template.json';
const parse = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;

describe('lwm_template.json', () => {
  it('reads back every built-in template as written', () => {
    for (const t of Object.values(BUILTIN_TEMPLATES)) {
      const back = templateFromJson(parse(templateFileBytes(t)), WHERE);
      expect(back).toEqual({
        version: t.version,
        description: t.description,
        text: t.text,
        ...(t.domains && { domains: t.domains }),
        targetOpen: t.targetOpen,
        targetClose: t.targetClose,
      });
    }
  });

  it('refuses a text that does not parse, naming the file and the line', () => {
    const json = { ...parse(templateFileBytes(BUILTIN_TEMPLATES.v0)), text: '{{ system_text }}\n{% for turn in history %}{{ turn.action }}\n{{ action }}' };
    expect(() => templateFromJson(json, WHERE)).toThrow(TemplateFileError);
    expect(() => templateFromJson(json, WHERE)).toThrow(/^export\/lwm_template\.json: text: line \d+: /);
  });

  it('refuses a text that never shows the action or the history (it would render prompts without them)', () => {
    const json = { ...parse(templateFileBytes(BUILTIN_TEMPLATES.v0)), text: 'A world model.\n' };
    expect(() => templateFromJson(json, WHERE)).toThrow(/export\/lwm_template\.json: text: line 1: the template never shows the history/);
  });

  it('refuses a per-domain text with a problem, naming its domain', () => {
    const json = { ...parse(templateFileBytes(BUILTIN_TEMPLATES.v0)), domains: { terminal: '{{ action ' } };
    expect(() => templateFromJson(json, WHERE)).toThrow(/export\/lwm_template\.json: domains\/terminal: line 1: /);
  });
});
