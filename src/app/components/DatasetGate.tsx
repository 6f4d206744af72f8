// Starts the dataset store (opening IndexedDB, loading the default dataset on first start) and
// shows its progress or error until the active dataset is in memory.
import { useEffect } from 'react';
import { useDatasetStore } from '../stores/datasets.ts';

export function useDatasets() {
  const init = useDatasetStore((s) => s.init);
  useEffect(() => {
    void init();
  }, [init]);
  return useDatasetStore();
}

export function LoadProgress() {
  const importing = useDatasetStore((s) => s.importing);
  const message = useDatasetStore((s) => s.message);
  if (!message && !importing) return null;
  return (
    <div className="callout" role="status" aria-live="polite">
      <p>{message ?? `Importing ${importing?.file}…`}</p>
      {importing ? (
        <progress max={importing.total || 1} value={importing.consumed} aria-label={`Reading ${importing.file}`}>
          {importing.total ? Math.round((importing.consumed / importing.total) * 100) : 0}%
        </progress>
      ) : null}
    </div>
  );
}

export function DatasetError() {
  const error = useDatasetStore((s) => s.error);
  const status = useDatasetStore((s) => s.status);
  const loadDefault = useDatasetStore((s) => s.loadDefault);
  if (status !== 'error' || !error) return null;
  return (
    <div className="callout error" role="alert">
      <h2>Data could not be loaded</h2>
      <p>{error}</p>
      <button type="button" onClick={() => void loadDefault()}>
        Try loading the default dataset again
      </button>
    </div>
  );
}
