// Property-based fuzzing of lwm_template.json as a folder brings it: any JSON, and near-valid
// templates with hostile texts, domains and field types. Reading either gives a template that is
// written back and read again unchanged, or a TemplateFileError that names the file; never another
// error, and Object.prototype is left as it was.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { templateFileBytes, templateFromJson, TemplateFileError } from './templateFile.ts';

const WHERE = 'folder/lwm_template.json';
const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

/** Read `json` as a folder's lwm_template.json: 'ok' after a faithful round trip, or the error's message. */
function check(json: unknown): string {
  let t: ReturnType<typeof templateFromJson>;
  try {
    t = templateFromJson(json, WHERE);
  } catch (e) {
    expect(e, String(e)).toBeInstanceOf(TemplateFileError);
    expect((e as Error).message.startsWith(`${WHERE}: `)).toBe(true);
    return (e as Error).message;
  }
  const again = templateFromJson(JSON.parse(new TextDecoder().decode(templateFileBytes(t))), WHERE);
  expect(again).toEqual(t);
  return 'ok';
}

const jinja = fc.constantFrom(
  '{{',
  '}}',
  '{%',
  '%}',
  '{#',
  '#}',
  '{{ action }}',
  '{% for turn in history %}',
  '{% endfor %}',
  '{% if x %}',
  '{% endif %}',
  '{{ a.b[0] | upper }}',
  '\u0000',
  '\n',
  '"',
  '\\',
);
const hostileText = fc
  .tuple(
    fc.constantFrom(...Object.values(BUILTIN_TEMPLATES).map((t) => t.text)),
    fc.array(fc.tuple(fc.nat(), fc.oneof(jinja, fc.string({ maxLength: 12 }))), { maxLength: 3 }),
  )
  .map(([text, edits]) => edits.reduce((s, [at, piece]) => s.slice(0, at % (s.length + 1)) + piece + s.slice(at % (s.length + 1)), text));
const anyField = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constant(''),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
  fc.boolean(),
);
const domainKey = fc.oneof(fc.constantFrom('terminal', 'mcp', '__proto__', 'constructor', 'toString', ''), fc.string({ maxLength: 6 }));
const nearValid = fc.record(
  {
    version: fc.oneof({ arbitrary: fc.constantFrom('v0', 'tuned-3'), weight: 9 }, anyField),
    description: fc.oneof(fc.string({ maxLength: 20 }), anyField),
    text: fc.oneof({ arbitrary: hostileText, weight: 9 }, anyField),
    domains: fc.oneof(fc.dictionary(domainKey, fc.oneof({ arbitrary: hostileText, weight: 9 }, anyField), { maxKeys: 3 }), anyField),
    targetOpen: fc.oneof({ arbitrary: fc.constant('<predicted_observation>'), weight: 9 }, anyField),
    targetClose: fc.oneof({ arbitrary: fc.constant('</predicted_observation>'), weight: 9 }, anyField),
  },
  { requiredKeys: [] },
);

describe('lwm_template.json fuzzing', () => {
  it('any JSON value: a template that round-trips, or an error naming the file', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (json) => {
        check(json);
      }),
      { numRuns: 1500, seed: 51 },
    );
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_KEYS);
  });

  it('near-valid templates with hostile texts, domains and field types, parsed from JSON text as a folder gives them', () => {
    let accepted = 0;
    fc.assert(
      fc.property(nearValid, (t) => {
        if (check(JSON.parse(JSON.stringify(t))) === 'ok') accepted++;
      }),
      { numRuns: 2000, seed: 52 },
    );
    // The generator reaches both answers: not every input is refused.
    expect(accepted).toBeGreaterThan(20);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTO_KEYS);
    expect(({} as Record<string, unknown>).terminal).toBeUndefined();
  });

  it('a text nested 20,000 blocks deep is refused or read, not a stack overflow', () => {
    const depth = 20_000;
    const text = `{% for turn in history %}{{ turn.action }}{% endfor %}{{ action }}${'{% if x %}'.repeat(depth)}${'{% endif %}'.repeat(depth)}`;
    const base = JSON.parse(new TextDecoder().decode(templateFileBytes(BUILTIN_TEMPLATES.v0)));
    check({ ...base, text });
    check({ ...base, text: `${'{{ ('.repeat(depth)}` });
  });
});
