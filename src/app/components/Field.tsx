// A labelled form field with its hint and error (ids `${id}-hint`, `${id}-error`), shared by the
// Train, Bench and Optimize forms.
import type { ReactNode } from 'react';

export function Field({ id, label, error, hint, children }: { id: string; label: string; error?: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? (
        <span className="muted small" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span className="error-text small" id={`${id}-error`}>
          {error}
        </span>
      ) : null}
    </div>
  );
}
