// Monaco's ESM entry points that this app imports by path (to leave out the ~80 basic languages
// the package's main entry registers) have no type declarations of their own.
declare module 'monaco-editor/esm/vs/editor/edcore.main.js' {
  export * from 'monaco-editor';
}
declare module 'monaco-editor/esm/vs/language/json/monaco.contribution.js';
declare module 'monaco-editor/esm/vs/base/common/errors.js' {
  /** True for Monaco's CancellationError (name and message 'Canceled'). */
  export function isCancellationError(error: unknown): boolean;
}
