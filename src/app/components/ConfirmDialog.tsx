// A modal confirmation on the native <dialog> element: focus moves into it, Escape cancels, and
// focus returns to the opener when it closes.
import { useEffect, useRef, useState } from 'react';

export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: React.ReactNode;
  confirmLabel: string;
  onConfirm(): void;
  onCancel(): void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id="confirm-title">{title}</h2>
      <div>{children}</div>
      <div className="dialog-actions">
        {/* biome-ignore lint/a11y/noAutofocus: a confirmation dialog starts on its safe answer, Cancel */}
        <button type="button" className="secondary" onClick={onCancel} autoFocus>
          Cancel
        </button>
        <button type="button" className="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * Asks before deleting one item of a list: open while `target` is set, titled and labelled by
 * `what` (a dataset, a run); confirming closes the dialog and deletes the target.
 */
export function ConfirmDelete<T>({
  target,
  what,
  onDelete,
  onClose,
  children,
}: {
  target: T | undefined;
  what: string;
  onDelete(target: T): void;
  onClose(): void;
  children: React.ReactNode;
}) {
  return (
    <ConfirmDialog
      open={target !== undefined}
      title={`Delete this ${what}?`}
      confirmLabel={`Delete ${what}`}
      onCancel={onClose}
      onConfirm={() => {
        onClose();
        if (target !== undefined) onDelete(target);
      }}
    >
      {children}
    </ConfirmDialog>
  );
}

/** The item a delete dialog asks about: chosen by id, looked up in the current list (so it is gone when the item is). */
export function useDeleteTarget<T extends { id: string }>(items: readonly T[]) {
  const [id, setId] = useState<string | null>(null);
  return { target: items.find((x) => x.id === id), ask: (itemId: string) => setId(itemId), close: () => setId(null) };
}
