// "From the Hub": a Hugging Face model id (`org/name` or `org/name@revision`) typed beside a folder
// picker, downloaded into this browser's storage with each file's progress shown (stores/hubModels.ts),
// then handed on as a picked folder's files are. An access token for a gated or private model is
// kept as an endpoint's API key is: in memory, and on this device only when the box is ticked.
import { useState } from 'react';
import { formatBytes } from '../../storage/quota.ts';
import type { HfFolderFile } from '../../train/hfFolder.ts';
import { apiKey, isKeyRemembered, setApiKey } from '../stores/endpoints.ts';
import { HUB_TOKEN_ID, useHubModelStore, type FileProgress } from '../stores/hubModels.ts';
import { FolderError } from './FolderInput.tsx';

function FileLine({ f }: { f: FileProgress }) {
  return (
    <li className="hub-file" data-testid="hub-file" data-path={f.path}>
      <div className="hub-file-head">
        <span className="mono small">{f.path}</span>
        <span className="muted small">
          {formatBytes(f.done)}
          {f.total !== null ? ` of ${formatBytes(f.total)}` : ''}
        </span>
      </div>
      <progress max={f.total ?? undefined} value={f.done} aria-label={`${f.path} downloaded`} />
    </li>
  );
}

export function HubIdField({ scope, onFiles }: { scope: string; onFiles(files: HfFolderFile[]): void }) {
  const fetchModel = useHubModelStore((s) => s.fetchModel);
  const state = useHubModelStore((s) => s.fetches[scope]);
  const [id, setId] = useState('');
  const [token, setToken] = useState(() => apiKey(HUB_TOKEN_ID));
  const [remember, setRemember] = useState(() => isKeyRemembered(HUB_TOKEN_ID));
  const fetching = state?.status === 'fetching';
  const go = async () => {
    setApiKey(HUB_TOKEN_ID, token.trim(), remember);
    const files = await fetchModel(scope, id);
    if (files) onFiles(files);
  };
  return (
    <div className="hub-field" data-testid={`${scope}-hub`}>
      <div className="pg-row">
        <div className="field">
          <label htmlFor={`${scope}-hub-id`}>From the Hub</label>
          <input
            id={`${scope}-hub-id`}
            type="text"
            spellCheck={false}
            autoComplete="off"
            placeholder="org/name or org/name@revision"
            title="A Hugging Face model id; downloaded once into this browser's storage"
            value={id}
            onChange={(e) => setId(e.target.value)}
            onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), void go())}
          />
        </div>
        <button type="button" className="small" disabled={fetching} onClick={() => void go()}>
          {fetching ? 'Fetching…' : 'Fetch'}
        </button>
      </div>
      <details className="small">
        <summary>Access token{token ? ` (${remember ? 'remembered on this device' : 'in memory only'})` : ' (gated or private models)'}</summary>
        <div className="pg-row">
          <div className="field">
            <label htmlFor={`${scope}-hub-token`}>Hugging Face access token</label>
            <input
              id={`${scope}-hub-token`}
              type="password"
              autoComplete="off"
              placeholder="hf_…"
              value={token}
              onChange={(e) => setToken(e.target.value)}
              onBlur={() => setApiKey(HUB_TOKEN_ID, token.trim(), remember)}
            />
          </div>
          <label className="check">
            <input
              type="checkbox"
              checked={remember}
              onChange={(e) => {
                setRemember(e.target.checked);
                setApiKey(HUB_TOKEN_ID, token.trim(), e.target.checked);
              }}
            />
            <span>Remember the token on this device (otherwise it is kept only until this page closes)</span>
          </label>
        </div>
      </details>
      {state ? (
        <div data-testid={`${scope}-hub-status`} aria-live="polite">
          {state.status === 'fetching' ? <p className="small muted">Fetching {state.label}…</p> : null}
          {state.status === 'done' ? (
            <p className="small muted">
              {state.fromCache ? `${state.label}: loaded from this browser's cache, nothing downloaded.` : `${state.label}: downloaded and checked.`}
            </p>
          ) : null}
          {state.files.length ? (
            <ul className="plain" data-testid={`${scope}-hub-progress`}>
              {state.files.map((f) => (
                <FileLine key={f.path} f={f} />
              ))}
            </ul>
          ) : null}
          {state.error ? <FolderError testId={`${scope}-hub-error`}>{state.error}</FolderError> : null}
        </div>
      ) : null}
    </div>
  );
}
