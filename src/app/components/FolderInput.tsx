// Taking a model folder: a picker (<input webkitdirectory>) behind a button-like label, and drop
// handlers for the box a folder (or its files) may be dropped on. The Train view's Hugging Face
// folder and the Playground / Bench pickers (Hugging Face and ONNX) share them; the two pickers
// also share their frame (FolderDropBox) and the frame of a picked folder's card (PickedFolderCard).
import { useState, type DragEvent, type ReactNode } from 'react';
import { droppedFiles } from '../lib/droppedFiles.ts';
import { folderFiles, type HfFolderFile } from '../../train/hfFolder.ts';

/** A folder picker behind a button-like label; `onFiles` gets the folder's files (never none). */
export function FolderInput({ label, text, testId, onFiles }: { label: string; text: string; testId: string; onFiles(files: HfFolderFile[]): void }) {
  return (
    <label className="button-like small">
      {text}
      <input
        type="file"
        multiple
        className="sr-only"
        aria-label={label}
        data-testid={testId}
        ref={(el) => el?.setAttribute('webkitdirectory', '')}
        onChange={(e) => {
          const files = e.target.files ? folderFiles(Array.from(e.target.files)) : [];
          e.target.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </label>
  );
}

/** Drop handlers for an element that takes a dropped folder (or its files); the drop stays with it (not the boxes around it). */
export function useFolderDrop(onFiles: (files: HfFolderFile[]) => void) {
  const [dragging, setDragging] = useState(false);
  const handlers = {
    onDragOver: (e: DragEvent) => {
      e.preventDefault();
      e.stopPropagation();
      setDragging(true);
    },
    onDragLeave: () => setDragging(false),
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      e.stopPropagation();
      setDragging(false);
      void droppedFiles(e.dataTransfer).then((files) => onFiles(folderFiles(files)));
    },
  };
  return { dragging, handlers };
}

/** A picker's box: what it takes (`intro`), the folder input, and the picked folders' cards; a folder may be dropped anywhere on it. */
export function FolderDropBox({
  testId,
  intro,
  input,
  onFiles,
  extra,
  children,
}: {
  testId: string;
  intro: ReactNode;
  input: { label: string; text: string; testId: string };
  onFiles(files: HfFolderFile[]): void;
  /** Shown under the folder input (the "From the Hub" field). */
  extra?: ReactNode;
  children: ReactNode[];
}) {
  const { dragging, handlers } = useFolderDrop(onFiles);
  return (
    <div className={dragging ? 'hf-picker dropzone dragging' : 'hf-picker dropzone'} data-testid={testId} {...handlers}>
      <p className="small">{intro}</p>
      <FolderInput {...input} onFiles={onFiles} />
      {extra}
      {children.length ? <ul className="plain">{children}</ul> : null}
    </div>
  );
}

interface PickedFolderCardProps {
  folder: { id: string; name: string; files: readonly unknown[]; status: string; error?: string | null };
  /** data-testid of the card; its error paragraphs get `${testId}-error`. */
  testId: string;
  /** What is read while the folder is checked. */
  reading: string;
  useLabel: string;
  used: boolean;
  usable: boolean;
  onUse(): void;
  onForget(): void;
  children?: ReactNode;
}

/** A picked folder: its name and file count, the check in progress or its error, what the picker shows of it (`children`), then use and forget. */
export function PickedFolderCard({ folder, testId, reading, useLabel, used, usable, onUse, onForget, children }: PickedFolderCardProps) {
  return (
    <li className="hf-folder" data-testid={testId}>
      <strong>{folder.name}</strong> <span className="muted small">({folder.files.length} files)</span>
      {folder.status === 'inspecting' ? <p className="small muted">{reading}</p> : null}
      {folder.error ? <FolderError testId={`${testId}-error`}>{folder.error}</FolderError> : null}
      {children}
      <div className="toolbar">
        <button type="button" className="small" disabled={!usable} aria-pressed={used || undefined} onClick={onUse}>
          {used ? `${useLabel} ✓` : useLabel}
        </button>
        <button type="button" className="secondary small" onClick={onForget}>
          Forget
        </button>
      </div>
    </li>
  );
}

/** A folder's problem, read out as an alert. */
export function FolderError({ testId, children }: { testId: string; children: ReactNode }) {
  return (
    <p className="error-text small" role="alert" data-testid={testId}>
      {children}
    </p>
  );
}
