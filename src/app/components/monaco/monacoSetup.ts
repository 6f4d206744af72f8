// Monaco, configured once when the first editor opens (this module is only ever imported
// dynamically, so Monaco stays out of the first page's chunks). Its web workers are bundled by
// Vite from node_modules (`?worker`), never fetched from a CDN. Registers the template language:
// JSON of the data core's PromptTemplate with {{placeholders}}, special tokens and the five
// system-prompt field names highlighted, and completion for placeholders and field names.
import * as monaco from 'monaco-editor/esm/vs/editor/edcore.main.js';
import 'monaco-editor/esm/vs/language/json/monaco.contribution.js';
import EditorWorker from 'monaco-editor/esm/vs/editor/editor.worker.js?worker';
import JsonWorker from 'monaco-editor/esm/vs/language/json/json.worker.js?worker';
import { SYSTEM_PROMPT_FIELDS } from '../../../core/schema/types.ts';
import { SPECIAL_TOKENS } from '../../../core/tokenizer/index.ts';
import type { PLACEHOLDER_NAMES } from './placeholders.ts';

export { monaco };

(globalThis as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    return label === 'json' ? new JsonWorker() : new EditorWorker();
  },
};

export const TEMPLATE_LANGUAGE = 'lwm-template';

/** Placeholders a template may use, and where (see PromptTemplate in core/templates). */
export const PLACEHOLDERS: Record<(typeof PLACEHOLDER_NAMES)[number], string> = {
  domain: 'the trajectory domain (preamble, closing)',
  index: '1-based turn number (historyTurn, currentAction)',
  action: "the turn's action (historyTurn, currentAction)",
  observation: "an earlier turn's observation (historyTurn)",
};

const FIELD_HELP: Record<string, string> = {
  task_description: 'what the agent is trying to do',
  action_space: 'the actions the agent can take',
  initial_state: 'the state of the environment at the start',
  demonstrations: 'example interactions',
  simulation_instruction: 'rules for the simulator',
};

monaco.languages.register({ id: TEMPLATE_LANGUAGE, aliases: ['LWM template'] });
monaco.languages.setLanguageConfiguration(TEMPLATE_LANGUAGE, {
  brackets: [
    ['{', '}'],
    ['[', ']'],
  ],
  autoClosingPairs: [
    { open: '{', close: '}', notIn: ['string'] },
    { open: '[', close: ']', notIn: ['string'] },
    { open: '"', close: '"', notIn: ['string'] },
  ],
});

const specials = Object.values(SPECIAL_TOKENS).map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
monaco.languages.setMonarchTokensProvider(TEMPLATE_LANGUAGE, {
  fields: [...SYSTEM_PROMPT_FIELDS],
  placeholders: Object.keys(PLACEHOLDERS),
  tokenizer: {
    root: [
      [/"(?=(?:[^"\\]|\\.)*"\s*:)/, { token: 'key', next: '@key' }],
      [/"/, { token: 'string', next: '@string' }],
      [/-?\d+(\.\d+)?([eE][-+]?\d+)?/, 'number'],
      [/\b(?:true|false|null)\b/, 'keyword'],
      [/[{}[\],:]/, 'delimiter'],
      [/\s+/, 'white'],
    ],
    key: [
      [/[^"\\]+/, 'key'],
      [/\\./, 'key'],
      [/"/, { token: 'key', next: '@pop' }],
    ],
    string: [
      [/\{\{(\w+)\}\}/, { cases: { '$1@placeholders': 'placeholder', '@default': 'placeholder.unknown' } }],
      [new RegExp(specials.join('|')), 'special'],
      [/\\[nt"\\/bfr]/, 'string.escape'],
      [/\\u[0-9a-fA-F]{4}/, 'string.escape'],
      [/[a-z_]+/, { cases: { '@fields': 'field', '@default': 'string' } }],
      [/[^"\\{<a-z_]+/, 'string'],
      [/[{<\\]/, 'string'],
      [/"/, { token: 'string', next: '@pop' }],
    ],
  },
} as monaco.languages.IMonarchLanguage);

const rules = (dark: boolean): monaco.editor.ITokenThemeRule[] => [
  { token: 'placeholder', foreground: dark ? 'ffd43b' : 'c92a2a', fontStyle: 'bold' },
  { token: 'placeholder.unknown', foreground: dark ? 'ff8787' : 'e03131', fontStyle: 'underline' },
  { token: 'special', foreground: dark ? 'da77f2' : '862e9c', fontStyle: 'bold' },
  { token: 'field', foreground: dark ? '69db7c' : '2b8a3e', fontStyle: 'bold' },
  { token: 'key', foreground: dark ? '74c0fc' : '1864ab' },
  { token: 'string', foreground: dark ? 'e4e8ef' : '1d2330' },
  { token: 'string.escape', foreground: dark ? '97a1b3' : '5c6677' },
];
monaco.editor.defineTheme('lwm-light', { base: 'vs', inherit: true, rules: rules(false), colors: {} });
monaco.editor.defineTheme('lwm-dark', { base: 'vs-dark', inherit: true, rules: rules(true), colors: {} });

// Light and dark follow the system setting, as the rest of the app does.
const dark = matchMedia('(prefers-color-scheme: dark)');
export const themeName = () => (dark.matches ? 'lwm-dark' : 'lwm-light');
dark.addEventListener('change', () => monaco.editor.setTheme(themeName()));

monaco.languages.registerCompletionItemProvider(TEMPLATE_LANGUAGE, {
  triggerCharacters: ['{', '"'],
  provideCompletionItems(model, position) {
    const before = model.getValueInRange({ startLineNumber: position.lineNumber, startColumn: 1, endLineNumber: position.lineNumber, endColumn: position.column });
    const word = model.getWordUntilPosition(position);
    const range = { startLineNumber: position.lineNumber, endLineNumber: position.lineNumber, startColumn: word.startColumn, endColumn: word.endColumn };
    const placeholder = /\{\{(\w*)$/.exec(before);
    if (placeholder) {
      const start = position.column - placeholder[1].length;
      const after = model.getValueInRange({ startLineNumber: position.lineNumber, startColumn: position.column, endLineNumber: position.lineNumber, endColumn: position.column + 2 });
      return {
        suggestions: Object.entries(PLACEHOLDERS).map(([name, doc]) => ({
          label: `{{${name}}}`,
          filterText: name,
          kind: monaco.languages.CompletionItemKind.Variable,
          insertText: after === '}}' ? name : `${name}}}`,
          documentation: doc,
          range: { ...range, startColumn: start },
        })),
      };
    }
    // Field names: where a section names its field, and anywhere inside a string on request.
    const inField = /"field"\s*:\s*"[a-z_]*$/.test(before);
    const quotes = (before.match(/(?<!\\)"/g) ?? []).length;
    if (!inField && quotes % 2 === 0) return { suggestions: [] };
    return {
      suggestions: SYSTEM_PROMPT_FIELDS.map((f, i) => ({
        label: f,
        kind: monaco.languages.CompletionItemKind.Field,
        insertText: f,
        detail: 'system-prompt field',
        documentation: FIELD_HELP[f],
        sortText: String(i),
        range,
      })),
    };
  },
});

// Raw trajectories are JSON; syntax and schema errors (from the data core's validator) are our own
// markers, so they match the problem list under the editor; Monaco's JSON service formats and folds.
monaco.languages.json.jsonDefaults.setDiagnosticsOptions({ validate: false });
