// React wrappers around Monaco's editor and diff editor. Monaco itself arrives with the first
// editor that mounts (a dynamic import of ./monacoSetup.ts), so views that never show an editor never
// load it.
import { useEffect, useRef, useState } from 'react';
import type * as Monaco from 'monaco-editor';

type MonacoModule = typeof import('./monacoSetup.ts');
let loading: Promise<MonacoModule> | null = null;
export function loadMonaco(): Promise<MonacoModule> {
  loading ??= import('./monacoSetup.ts');
  return loading;
}

export interface EditorMarker {
  message: string;
  line: number;
  column?: number;
  /** Marks to the end of the line when omitted. */
  endColumn?: number;
}

function toMarkers(m: typeof Monaco, model: Monaco.editor.ITextModel, markers: EditorMarker[]): Monaco.editor.IMarkerData[] {
  return markers.map((x) => {
    const line = Math.min(Math.max(1, x.line), model.getLineCount());
    const max = model.getLineMaxColumn(line);
    const start = Math.min(x.column ?? model.getLineFirstNonWhitespaceColumn(line) ?? 1, max);
    const end = Math.min(Math.max(x.endColumn ?? max, start + 1), Math.max(max, start + 1));
    return { severity: m.MarkerSeverity.Error, message: x.message, startLineNumber: line, startColumn: start || 1, endLineNumber: line, endColumn: end };
  });
}

export function CodeEditor({
  value,
  onChange,
  language,
  markers,
  ariaLabel,
  className,
  testId,
}: {
  value: string;
  onChange(text: string): void;
  language: string;
  markers: EditorMarker[];
  ariaLabel: string;
  className?: string;
  testId?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<Monaco.editor.IStandaloneCodeEditor | null>(null);
  const mod = useRef<MonacoModule | null>(null);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let disposed = false;
    loadMonaco().then(
      (m) => {
        if (disposed || !host.current) return;
        mod.current = m;
        const ed = m.monaco.editor.create(host.current, {
          value,
          language,
          theme: m.themeName(),
          ariaLabel: `${ariaLabel} (press Ctrl+M, then Tab, to move focus out of the editor)`,
          automaticLayout: true,
          minimap: { enabled: false },
          wordWrap: 'on',
          fontSize: 13,
          scrollBeyondLastLine: false,
          tabSize: 2,
          // Sticky headings cover the first lines of a deep JSON document; the outline is short anyway.
          stickyScroll: { enabled: false },
        });
        ed.onDidChangeModelContent(() => onChangeRef.current(ed.getValue()));
        editor.current = ed;
        setReady(true);
      },
      (e) => setError(`The editor could not be loaded: ${(e as Error).message}`),
    );
    return () => {
      disposed = true;
      editor.current?.getModel()?.dispose();
      editor.current?.dispose();
      editor.current = null;
    };
    // The editor is created once; value and markers are synchronised by the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const ed = editor.current;
    if (ed && ed.getValue() !== value) {
      // An outside change (another version, another trajectory): replace through an edit so undo still works.
      const model = ed.getModel()!;
      ed.executeEdits('app', [{ range: model.getFullModelRange(), text: value }]);
    }
  }, [value, ready]);

  useEffect(() => {
    const ed = editor.current;
    const m = mod.current;
    if (!ed || !m) return;
    const model = ed.getModel()!;
    m.monaco.editor.setModelMarkers(model, 'lwm', toMarkers(m.monaco, model, markers));
  }, [markers, ready]);

  return (
    <div className={className ?? 'editor-host'} data-testid={testId} data-ready={ready || undefined}>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {!ready && !error ? (
        <p className="loading" style={{ padding: '0.5rem' }}>
          Loading the editor…
        </p>
      ) : null}
      <div ref={host} style={{ height: ready ? '100%' : 0 }} />
    </div>
  );
}

/** `revealChange`: scroll to the first difference once computed (a long text with a small edit far down). */
export function DiffEditor({
  original,
  modified,
  ariaLabel,
  testId,
  revealChange,
}: {
  original: string;
  modified: string;
  ariaLabel: string;
  testId?: string;
  revealChange?: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const diff = useRef<Monaco.editor.IStandaloneDiffEditor | null>(null);
  const mod = useRef<MonacoModule | null>(null);
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let disposed = false;
    void loadMonaco().then((m) => {
      if (disposed || !host.current) return;
      mod.current = m;
      diff.current = m.monaco.editor.createDiffEditor(host.current, {
        theme: m.themeName(),
        readOnly: true,
        originalEditable: false,
        automaticLayout: true,
        renderSideBySide: host.current.clientWidth > 700,
        useInlineViewWhenSpaceIsLimited: true,
        minimap: { enabled: false },
        wordWrap: 'on',
        diffWordWrap: 'on',
        fontSize: 13,
        ariaLabel,
        originalAriaLabel: `${ariaLabel}: original`,
        modifiedAriaLabel: `${ariaLabel}: modified`,
      } as Monaco.editor.IStandaloneDiffEditorConstructionOptions);
      setReady(true);
    });
    return () => {
      disposed = true;
      const model = diff.current?.getModel();
      diff.current?.dispose();
      model?.original.dispose();
      model?.modified.dispose();
      diff.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const d = diff.current;
    const m = mod.current;
    if (!d || !m) return;
    const old = d.getModel();
    d.setModel({ original: m.monaco.editor.createModel(original, m.TEMPLATE_LANGUAGE), modified: m.monaco.editor.createModel(modified, m.TEMPLATE_LANGUAGE) });
    old?.original.dispose();
    old?.modified.dispose();
    if (!revealChange) return;
    const sub = d.onDidUpdateDiff(() => {
      const first = d.getLineChanges()?.[0];
      if (first) d.getModifiedEditor().revealLineInCenter(Math.max(1, first.modifiedStartLineNumber || first.modifiedEndLineNumber));
      sub.dispose();
    });
    return () => sub.dispose();
  }, [original, modified, ready, revealChange]);

  return (
    <div className="editor-host short" data-testid={testId} data-ready={ready || undefined}>
      {!ready ? (
        <p className="loading" style={{ padding: '0.5rem' }}>
          Loading the diff editor…
        </p>
      ) : null}
      <div ref={host} style={{ height: ready ? '100%' : 0 }} />
    </div>
  );
}
