// Monaco, configured once when the first editor opens (this module is only ever imported
// dynamically, so Monaco stays out of the first page's chunks). Its web workers are bundled by
// Vite from node_modules (`?worker`), never fetched from a CDN. Registers the template language:
// the data core's Jinja dialect with its tags, the known variables (unknown names marked),
// special tokens and comments highlighted, and completion of variable names inside tags.
import * as monaco from 'monaco-editor/esm/vs/editor/edcore.main.js';
import 'monaco-editor/esm/vs/language/json/monaco.contribution.js';
import EditorWorker from 'monaco-editor/esm/vs/editor/editor.worker.js?worker';
import JsonWorker from 'monaco-editor/esm/vs/language/json/json.worker.js?worker';
import { isCancellationError } from 'monaco-editor/esm/vs/base/common/errors.js';
import { SYSTEM_PROMPT_FIELDS } from '../../../core/schema/types.ts';
import { SPECIAL_TOKENS } from '../../../core/tokenizer/index.ts';
import { TEMPLATE_VARIABLE_NAMES, TEMPLATE_VARIABLES } from '../../../core/templates/index.ts';

export { monaco };

(globalThis as unknown as { MonacoEnvironment: monaco.Environment }).MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    return label === 'json' ? new JsonWorker() : new EditorWorker();
  },
};

// Disposing an editor cancels Monaco's pending delayed work (its Delayer rejects with a
// CancellationError that nothing awaits), which the browser reports as an uncaught rejection
// although nothing failed (microsoft/monaco-editor#4702, #4859). Only that exact error is
// silenced, by Monaco's own test for it; every other rejection is reported as before.
globalThis.addEventListener('unhandledrejection', (event) => {
  if (isCancellationError(event.reason)) event.preventDefault();
});

export const TEMPLATE_LANGUAGE = 'lwm-template';

/** What each name a template may use holds (the data core's list). */
export const PLACEHOLDERS: Readonly<Record<string, string>> = TEMPLATE_VARIABLES;
/** A history entry's attributes, inside {% for turn in history %}. */
const TURN_ATTRIBUTES: Record<string, string> = { index: '1-based turn number', action: "the turn's action", observation: "the turn's observation" };

monaco.languages.register({ id: TEMPLATE_LANGUAGE, aliases: ['LWM template (Jinja)'] });
monaco.languages.setLanguageConfiguration(TEMPLATE_LANGUAGE, {
  brackets: [
    ['{{', '}}'],
    ['{%', '%}'],
    ['(', ')'],
  ],
  autoClosingPairs: [
    { open: '{{', close: ' }}' },
    { open: '{%', close: ' %}' },
    { open: '{#', close: ' #}' },
  ],
});

const specials = Object.values(SPECIAL_TOKENS).map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
const inTag = (close: RegExp) => [
  [close, { token: 'delimiter.tag', next: '@pop' }],
  [/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/, 'string'],
  [/\d+(?:\.\d+)?/, 'number'],
  [/\.\s*[a-zA-Z_]\w*/, 'attribute'],
  [/\|\s*[a-zA-Z_]\w*/, 'filter'],
  [/[a-zA-Z_]\w*/, { cases: { '@keywords': 'keyword', '@variables': 'placeholder', '@locals': 'variable', '@default': 'placeholder.unknown' } }],
  [/\s+/, 'white'],
  [/./, 'delimiter'],
];
monaco.languages.setMonarchTokensProvider(TEMPLATE_LANGUAGE, {
  variables: [...TEMPLATE_VARIABLE_NAMES],
  locals: ['turn', 'loop', 'range', 'namespace'],
  keywords: [
    'if',
    'elif',
    'else',
    'endif',
    'for',
    'in',
    'endfor',
    'set',
    'endset',
    'macro',
    'endmacro',
    'not',
    'and',
    'or',
    'is',
    'true',
    'false',
    'none',
    'True',
    'False',
    'None',
    'defined',
  ],
  fields: [...SYSTEM_PROMPT_FIELDS],
  tokenizer: {
    root: [
      [/\{#/, { token: 'comment', next: '@comment' }],
      [/\{\{-?/, { token: 'delimiter.tag', next: '@expression' }],
      [/\{%-?/, { token: 'delimiter.tag', next: '@statement' }],
      [new RegExp(specials.join('|')), 'special'],
      [/[^{<]+/, 'text'],
      [/[{<]/, 'text'],
    ],
    expression: inTag(/-?\}\}/),
    statement: inTag(/-?%\}/),
    comment: [
      [/#\}/, { token: 'comment', next: '@pop' }],
      [/[^#]+|#/, 'comment'],
    ],
  },
} as monaco.languages.IMonarchLanguage);

const rules = (dark: boolean): monaco.editor.ITokenThemeRule[] => [
  { token: 'placeholder', foreground: dark ? 'ffd43b' : 'c92a2a', fontStyle: 'bold' },
  { token: 'placeholder.unknown', foreground: dark ? 'ff8787' : 'e03131', fontStyle: 'underline' },
  { token: 'special', foreground: dark ? 'da77f2' : '862e9c', fontStyle: 'bold' },
  { token: 'field', foreground: dark ? '69db7c' : '2b8a3e', fontStyle: 'bold' },
  { token: 'key', foreground: dark ? '74c0fc' : '1864ab' },
  { token: 'delimiter.tag', foreground: dark ? '74c0fc' : '1864ab', fontStyle: 'bold' },
  { token: 'keyword', foreground: dark ? 'ffa94d' : 'c2410c' },
  { token: 'variable', foreground: dark ? '69db7c' : '2b8a3e' },
  { token: 'comment', foreground: dark ? '868e96' : '6b7280', fontStyle: 'italic' },
  { token: 'string', foreground: dark ? 'e4e8ef' : '1d2330' },
  { token: 'string.escape', foreground: dark ? '97a1b3' : '5c6677' },
];
monaco.editor.defineTheme('lwm-light', { base: 'vs', inherit: true, rules: rules(false), colors: {} });
monaco.editor.defineTheme('lwm-dark', { base: 'vs-dark', inherit: true, rules: rules(true), colors: {} });

// Light and dark follow the system setting, as the rest of the app does.
const dark = matchMedia('(prefers-color-scheme: dark)');
export const themeName = () => (dark.matches ? 'lwm-dark' : 'lwm-light');
dark.addEventListener('change', () => monaco.editor.setTheme(themeName()));

/** Whether the cursor is inside an open {{ … }} or {% … %} tag of its line. */
function insideTag(before: string): boolean {
  const open = Math.max(before.lastIndexOf('{{'), before.lastIndexOf('{%'));
  return open >= 0 && open > Math.max(before.lastIndexOf('}}'), before.lastIndexOf('%}'));
}

monaco.languages.registerCompletionItemProvider(TEMPLATE_LANGUAGE, {
  triggerCharacters: ['{', ' ', '.', '%'],
  provideCompletionItems(model, position) {
    const before = model.getValueInRange({
      startLineNumber: position.lineNumber,
      startColumn: 1,
      endLineNumber: position.lineNumber,
      endColumn: position.column,
    });
    const word = model.getWordUntilPosition(position);
    const range = { startLineNumber: position.lineNumber, endLineNumber: position.lineNumber, startColumn: word.startColumn, endColumn: word.endColumn };
    if (!insideTag(before)) return { suggestions: [] };
    const item = (label: string, doc: string, kind: monaco.languages.CompletionItemKind, i: number) => ({
      label,
      kind,
      insertText: label,
      documentation: doc,
      sortText: String(i).padStart(2, '0'),
      range,
    });
    // After "turn.": the attributes of a history entry.
    if (/\bturn\.\w*$/.test(before))
      return { suggestions: Object.entries(TURN_ATTRIBUTES).map(([k, d], i) => item(k, d, monaco.languages.CompletionItemKind.Property, i)) };
    return {
      suggestions: Object.entries(PLACEHOLDERS).map(([name, doc], i) =>
        item(
          name,
          doc,
          (SYSTEM_PROMPT_FIELDS as readonly string[]).includes(name) ? monaco.languages.CompletionItemKind.Field : monaco.languages.CompletionItemKind.Variable,
          i,
        ),
      ),
    };
  },
});

// Raw trajectories are JSON; syntax and schema errors (from the data core's validator) are our own
// markers, so they match the problem list under the editor; Monaco's JSON service formats and folds.
monaco.languages.json.jsonDefaults.setDiagnosticsOptions({ validate: false });
