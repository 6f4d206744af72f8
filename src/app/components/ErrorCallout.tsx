// An error the user can dismiss: the message, its line breaks kept, and a Dismiss button.
export function ErrorCallout({ error, onDismiss, testId }: { error: string | null | undefined; onDismiss: () => void; testId?: string }) {
  if (!error) return null;
  return (
    <div className="callout error" role="alert" data-testid={testId}>
      <p style={{ whiteSpace: 'pre-wrap' }}>{error}</p>
      <button type="button" className="secondary small" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
