// Taking a model folder: a picker (<input webkitdirectory>) behind a button-like label, and drop
// handlers for the box a folder (or its files) may be dropped on. The Train view's Hugging Face
// folder and the Playground / Bench pickers (Hugging Face and ONNX) share them.
import { useState, type DragEvent } from 'react';
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
