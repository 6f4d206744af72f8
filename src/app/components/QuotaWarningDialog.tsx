// The quota warning before a long job starts (stores/storage.ts, guardJob): says how much is
// free and what the job may write, and lets the user start anyway, free space first (the
// System view's Storage card), or not start. Escape is "not now".
import { useEffect, useRef } from 'react';
import { useStorageStore } from '../stores/storage.ts';

export function QuotaWarningDialog() {
  const { warning, answerWarning } = useStorageStore();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (warning && !d.open) d.showModal();
    if (!warning && d.open) d.close();
  }, [warning]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby="quota-title"
      aria-describedby="quota-message"
      data-testid="quota-warning"
      onCancel={(e) => {
        e.preventDefault();
        answerWarning('cancel');
      }}
    >
      <h2 id="quota-title">Browser storage is nearly full</h2>
      <p id="quota-message">{warning?.message}</p>
      <div className="dialog-actions">
        <button type="button" className="secondary" onClick={() => answerWarning('cancel')}>
          Not now
        </button>
        {/* biome-ignore lint/a11y/noAutofocus: the warning starts on freeing space, the answer that loses nothing */}
        <button type="button" onClick={() => answerWarning('storage')} autoFocus>
          Free space
        </button>
        <button type="button" className="secondary" onClick={() => answerWarning('continue')}>
          Start anyway
        </button>
      </div>
    </dialog>
  );
}
