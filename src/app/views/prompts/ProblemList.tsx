// The editors' problems as a list under the editor, each with the line it is on (the same
// problems the editor marks).
import type { EditorMarker } from '../../components/monaco/CodeEditor.tsx';

export function ProblemList({ problems, testId, live }: { problems: EditorMarker[]; testId: string; live?: boolean }) {
  return (
    <ul className="problems" data-testid={testId} aria-live={live ? 'polite' : undefined}>
      {problems.map((p, i) => (
        <li key={i}>
          line {p.line}: {p.message}
        </li>
      ))}
    </ul>
  );
}
