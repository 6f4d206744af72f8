// Playground: play an environment against a world model. Choose a backend (a checkpoint on the
// GPU, an OpenAI-compatible endpoint, a baseline) and a world (a built-in environment at a seed,
// or a free world with your own system prompt); type actions and watch the model's observation
// stream in beside the real environment's, judged per turn as RL judges it. Edit an earlier action
// to branch, switch what the model is fed as history, and save the session as a trajectory.
import { useEffect, useMemo, useState } from 'react';
import { Link } from 'wouter';
import { DOMAINS, SYSTEM_PROMPT_FIELDS, type KnownDomain, type SystemPromptField } from '../../core/schema/types.ts';
import { effectiveMode, sessionSummary, type World } from '../../envs/session.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { useDatasetStore } from '../stores/datasets.ts';
import { PLAYGROUND_DATASET_ID, PLAYGROUND_DATASET_NAME, usePlaygroundStore } from '../stores/playground.ts';
import { templateSet, useTemplateStore } from '../stores/templates.ts';
import { ProblemHelp } from '../components/ProblemHelp.tsx';
import { BackendPanel } from './playground/BackendPanel.tsx';
import { ContextBar } from './playground/ContextBar.tsx';
import { TurnCard } from './playground/TurnCard.tsx';
import './playground/playground.css';

const FIELD_LABEL: Record<SystemPromptField, string> = {
  task_description: 'Task description',
  action_space: 'Action space',
  initial_state: 'Initial state',
  demonstrations: 'Demonstrations',
  simulation_instruction: 'Simulation instruction',
};

function WorldPicker() {
  const world = usePlaygroundStore((s) => s.session.world);
  const setWorld = usePlaygroundStore((s) => s.setWorld);
  const [seed, setSeed] = useState(world.kind === 'env' ? String(world.seed) : '1');
  const [freeDomain, setFreeDomain] = useState(world.kind === 'free' ? world.domain : 'free');
  const seedNum = Number(seed);
  const seedOk = seed.trim() !== '' && Number.isInteger(seedNum) && seedNum >= 0 && seedNum <= 0x7fffffff;
  return (
    <div className="pg-row" role="group" aria-label="World and seed">
      <div className="field">
        <label htmlFor="pg-world">World</label>
        <select
          id="pg-world"
          value={world.kind === 'env' ? world.domain : 'free'}
          onChange={(e) => {
            const v = e.target.value;
            const w: World =
              v === 'free' ? { kind: 'free', domain: freeDomain.trim() || 'free' } : { kind: 'env', domain: v as KnownDomain, seed: seedOk ? seedNum : 1 };
            setWorld(w);
          }}
        >
          <optgroup label="Built-in environments">
            {DOMAINS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </optgroup>
          <option value="free">Free world (your own system prompt)</option>
        </select>
      </div>
      {world.kind === 'env' ? (
        <div className="field">
          <label htmlFor="pg-seed">Seed</label>
          <input
            id="pg-seed"
            type="number"
            min={0}
            value={seed}
            aria-invalid={!seedOk || undefined}
            onChange={(e) => setSeed(e.target.value)}
            onBlur={() => seedOk && seedNum !== world.seed && setWorld({ ...world, seed: seedNum })}
            onKeyDown={(e) => e.key === 'Enter' && seedOk && setWorld({ ...world, seed: seedNum })}
          />
          {!seedOk ? <span className="error-text small">A whole number from 0 to 2147483647.</span> : null}
        </div>
      ) : (
        <div className="field">
          <label htmlFor="pg-free-domain">Domain name</label>
          <input
            id="pg-free-domain"
            type="text"
            value={freeDomain}
            onChange={(e) => setFreeDomain(e.target.value)}
            onBlur={() => freeDomain.trim() && setWorld({ kind: 'free', domain: freeDomain.trim() })}
          />
        </div>
      )}
    </div>
  );
}

function SystemPromptPanel() {
  const sp = usePlaygroundStore((s) => s.session.systemPrompt);
  const world = usePlaygroundStore((s) => s.session.world);
  const setField = usePlaygroundStore((s) => s.setField);
  const resetFields = usePlaygroundStore((s) => s.resetFields);
  const template = usePlaygroundStore((s) => s.template);
  const setTemplate = usePlaygroundStore((s) => s.setTemplate);
  const backend = usePlaygroundStore((s) => s.backend);
  const model = usePlaygroundStore((s) => s.model);
  const versions = useTemplateStore((s) => s.versions);
  const known = useMemo(() => ({ ...BUILTIN_TEMPLATES, ...templateSet(versions) }), [versions]);
  useEffect(() => setTemplate(template, known), [known, template, setTemplate]);
  const local = backend?.kind === 'run' || backend?.kind === 'file';
  return (
    <details className="card pg-system" open={world.kind === 'free' || undefined}>
      <summary>
        <h2>System prompt</h2>
      </summary>
      <div className="pg-row">
        <div className="field">
          <label htmlFor="pg-template">Template</label>
          <select id="pg-template" value={template} onChange={(e) => setTemplate(e.target.value, known)}>
            <option value="">
              {local
                ? `as trained${model ? ` (${model.template})` : ''}`
                : backend?.kind === 'hf' || backend?.kind === 'onnx'
                  ? "AgentWorldBench layout (the model's chat template)"
                  : 'AgentWorldBench layout'}
            </option>
            {Object.keys(known).map((v) => (
              <option key={v} value={v}>
                {v}: {known[v].description.slice(0, 60)}
              </option>
            ))}
          </select>
        </div>
        {world.kind === 'env' ? (
          <button type="button" className="secondary small" onClick={resetFields}>
            Back to the environment&apos;s own
          </button>
        ) : null}
      </div>
      {SYSTEM_PROMPT_FIELDS.map((f) => (
        <div className="field" key={f}>
          <label htmlFor={`pg-field-${f}`}>{FIELD_LABEL[f]}</label>
          <textarea
            id={`pg-field-${f}`}
            rows={f === 'demonstrations' || f === 'initial_state' ? 5 : 3}
            value={sp[f]}
            onChange={(e) => setField(f, e.target.value)}
          />
        </div>
      ))}
      <p className="small muted">Edits apply from the next prediction on; “Re-run all” predicts the session again with them.</p>
    </details>
  );
}

function SamplingPanel() {
  const s = usePlaygroundStore((st) => st.sampling);
  const set = usePlaygroundStore((st) => st.setSampling);
  const num = (v: string, int: boolean): number | null => {
    if (v.trim() === '') return null;
    const n = Number(v);
    return Number.isFinite(n) && (!int || Number.isInteger(n)) ? n : null;
  };
  return (
    <fieldset className="pg-sampling">
      <legend>Sampling</legend>
      <div className="field">
        <label htmlFor="pg-temp">Temperature</label>
        <input
          id="pg-temp"
          type="number"
          min={0}
          step={0.1}
          value={s.temperature}
          onChange={(e) => set({ temperature: Math.max(0, num(e.target.value, false) ?? 0) })}
        />
      </div>
      <div className="field">
        <label htmlFor="pg-topk">Top-k</label>
        <input id="pg-topk" type="number" min={1} step={1} placeholder="off" value={s.topK ?? ''} onChange={(e) => set({ topK: num(e.target.value, true) })} />
      </div>
      <div className="field">
        <label htmlFor="pg-topp">Top-p</label>
        <input
          id="pg-topp"
          type="number"
          min={0}
          max={1}
          step={0.05}
          placeholder="off"
          value={s.topP ?? ''}
          onChange={(e) => set({ topP: num(e.target.value, false) })}
        />
      </div>
      <div className="field">
        <label htmlFor="pg-max">Max tokens</label>
        <input
          id="pg-max"
          type="number"
          min={1}
          step={1}
          value={s.maxTokens}
          onChange={(e) => set({ maxTokens: Math.max(1, num(e.target.value, true) ?? 1) })}
        />
      </div>
      <div className="field">
        <label htmlFor="pg-seed-s">Seed</label>
        <input id="pg-seed-s" type="number" step={1} placeholder="none" value={s.seed ?? ''} onChange={(e) => set({ seed: num(e.target.value, true) })} />
      </div>
      <p className="small muted">Temperature 0 is greedy (top-k and top-p then do nothing).</p>
    </fieldset>
  );
}

function HistoryToggle() {
  const session = usePlaygroundStore((s) => s.session);
  const setMode = usePlaygroundStore((s) => s.setMode);
  const rerunFrom = usePlaygroundStore((s) => s.rerunFrom);
  const live = usePlaygroundStore((s) => s.live);
  const mode = effectiveMode(session);
  const free = session.world.kind === 'free';
  return (
    <fieldset className="pg-mode">
      <legend>History the model is fed</legend>
      <label className="check">
        <input type="radio" name="pg-mode" checked={mode === 'teacher'} disabled={free} onChange={() => setMode('teacher')} />
        <span>
          <strong>Teacher forcing</strong>: the real observations (what AgentWorldBench measures)
        </span>
      </label>
      <label className="check">
        <input type="radio" name="pg-mode" checked={mode === 'free'} disabled={free} onChange={() => setMode('free')} />
        <span>
          <strong>Free running</strong>: its own earlier predictions (a simulation; errors compound)
        </span>
      </label>
      {free ? <p className="small muted">A free world has no real observations: the model always runs on its own.</p> : null}
      <button type="button" className="secondary small" disabled={!session.turns.length || !!live} onClick={() => void rerunFrom(0)}>
        Re-run all turns this way
      </button>
    </fieldset>
  );
}

function ErrorCallout() {
  const error = usePlaygroundStore((s) => s.error);
  const dismiss = usePlaygroundStore((s) => s.dismissError);
  if (!error) return null;
  const title: Record<string, string> = {
    cors: 'The endpoint is blocked (CORS) or down',
    endpoint: 'The endpoint failed',
    checkpoint: 'This checkpoint cannot be run',
    folder: 'This model folder cannot be run',
    'device-lost': 'The GPU device was lost',
    context: 'The prompt does not fit the context',
    'no-webgpu': 'This needs WebGPU',
    settings: 'Check the settings',
    storage: 'Saving failed',
    other: 'Something went wrong',
  };
  return (
    <div className="callout error" role="alert" data-testid="pg-error">
      <h2>{title[error.kind]}</h2>
      <p>{error.message}</p>
      <ProblemHelp help={error.help} open={error.kind === 'cors'} />
      {error.kind === 'no-webgpu' ? (
        <p>
          The <Link href="~/system">System view</Link> says how to get WebGPU; endpoints and baselines work without it.
        </p>
      ) : null}
      <button type="button" className="secondary small" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}

function SaveBar() {
  const save = usePlaygroundStore((s) => s.save);
  const saved = usePlaygroundStore((s) => s.saved);
  const turns = usePlaygroundStore((s) => s.session.turns.length);
  const datasets = useDatasetStore((s) => s.datasets);
  const reloadDataset = useDatasetStore((s) => s.reload);
  const initDatasets = useDatasetStore((s) => s.init);
  const [target, setTarget] = useState(PLAYGROUND_DATASET_ID);
  const [busy, setBusy] = useState(false);
  useEffect(() => void initDatasets(), [initDatasets]);
  const options = [{ id: PLAYGROUND_DATASET_ID, name: PLAYGROUND_DATASET_NAME }, ...datasets.filter((d) => d.id !== PLAYGROUND_DATASET_ID)];
  return (
    <div className="toolbar pg-save">
      <div className="field">
        <label htmlFor="pg-save-to">Save into</label>
        <select id="pg-save-to" value={target} onChange={(e) => setTarget(e.target.value)}>
          {options.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </div>
      <button
        type="button"
        disabled={!turns || busy}
        onClick={async () => {
          setBusy(true);
          const name = options.find((o) => o.id === target)?.name ?? PLAYGROUND_DATASET_NAME;
          await save(target, name);
          const s = usePlaygroundStore.getState().saved;
          if (s) await reloadDataset(s.datasetId).catch(() => {});
          setBusy(false);
        }}
      >
        Save session as a trajectory
      </button>
      {saved ? (
        <span role="status" data-testid="pg-saved">
          Saved {saved.trajectoryId} into {saved.datasetName}.{' '}
          <Link href={`~/trajectories/${encodeURIComponent(saved.trajectoryId)}`}>Open it in Trajectories</Link>
        </span>
      ) : null}
    </div>
  );
}

function Summary() {
  const session = usePlaygroundStore((s) => s.session);
  const sum = sessionSummary(session);
  if (!sum) return null;
  return (
    <p className="small" data-testid="pg-summary">
      {sum.graded} judged {sum.graded === 1 ? 'turn' : 'turns'}: judge mean {sum.judge.toFixed(2)} / 5 · verifier pass {(sum.verifierPass * 100).toFixed(0)}% ·
      mean reward {sum.reward.toFixed(2)} / 25
    </p>
  );
}

/** The branches kept by edits, each one a switch away. */
function Branches({ busy }: { busy: boolean }) {
  const session = usePlaygroundStore((s) => s.session);
  const { switchBranch } = usePlaygroundStore.getState();
  if (!session.branches.length) return null;
  return (
    <div className="card pg-branches">
      <h2>Branches</h2>
      <ul>
        {session.branches.map((b, k) => (
          <li key={k}>
            {b.label}{' '}
            <button type="button" className="secondary small" disabled={busy} onClick={() => switchBranch(k)}>
              Switch to it
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The next action: typed, suggested by the scripted agent, sent; stop and reset beside it. */
function ActionForm({ busy }: { busy: boolean }) {
  const session = usePlaygroundStore((s) => s.session);
  const backend = usePlaygroundStore((s) => s.backend);
  const suggestion = usePlaygroundStore((s) => s.suggestion);
  const { send, suggest, stop, reset } = usePlaygroundStore.getState();
  const [action, setAction] = useState('');
  const actionSpace = session.systemPrompt.action_space;
  return (
    <form
      className="card pg-act"
      aria-label="Next action"
      onSubmit={(e) => {
        e.preventDefault();
        if (!action.trim() || busy) return;
        void send(action);
        setAction('');
      }}
    >
      <div className="pg-act-grid">
        <div>
          <div className="field">
            <label htmlFor="pg-action">Action {session.turns.length + 1}</label>
            <textarea
              id="pg-action"
              rows={3}
              value={action}
              placeholder={session.world.kind === 'env' && session.world.domain === 'terminal' ? 'e.g. ls -la' : 'the agent’s next action'}
              onChange={(e) => setAction(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey) {
                  e.preventDefault();
                  e.currentTarget.form?.requestSubmit();
                }
              }}
            />
          </div>
          <div className="toolbar">
            <button type="submit" disabled={busy || !action.trim() || !backend}>
              Send
            </button>
            <button
              type="button"
              className="secondary"
              disabled={session.world.kind !== 'env'}
              title={session.world.kind === 'env' ? "Ask the environment's scripted agent for a valid next action" : 'A free world has no scripted agent'}
              onClick={() => {
                const a = suggest();
                if (a !== null) setAction(a);
              }}
            >
              Suggest
            </button>
            {busy ? (
              <button type="button" className="danger" onClick={stop}>
                Stop
              </button>
            ) : null}
            <button type="button" className="secondary" disabled={!session.turns.length} onClick={reset}>
              Reset
            </button>
          </div>
          {!backend ? <p className="small muted">Choose a backend to send actions.</p> : null}
          {suggestion === null && session.world.kind === 'env' ? null : suggestion ? (
            <p className="small muted">Suggested by the scripted agent (press Suggest again for another).</p>
          ) : null}
        </div>
        <div className="pg-space">
          <h3>Action space</h3>
          <pre data-testid="pg-action-space">{actionSpace || '(none given: write one in the system prompt)'}</pre>
        </div>
      </div>
    </form>
  );
}

export default function PlaygroundView() {
  const session = usePlaygroundStore((s) => s.session);
  const live = usePlaygroundStore((s) => s.live);
  const context = usePlaygroundStore((s) => s.context);
  const { stop, editAction, runPending, release } = usePlaygroundStore.getState();
  const loadTemplates = useTemplateStore((s) => s.load);
  useEffect(() => {
    void loadTemplates();
    // A checkpoint chosen before a reload, or a folder picked before a view switch, is loaded again (the worker freed it).
    const { backend: b, model, setBackend } = usePlaygroundStore.getState();
    if ((b?.kind === 'run' || b?.kind === 'hf' || b?.kind === 'onnx') && !model) setBackend(b);
    // Leaving the view frees the checkpoint's GPU memory (training may want it).
    return () => release();
  }, [loadTemplates, release]);
  const busy = !!live;
  return (
    <section className="view pg" aria-labelledby="pg-title">
      <h1 id="pg-title">Playground</h1>
      <p className="muted">Play an environment against a world model: your action, the model’s observation, the real one beside it, judged as RL judges it.</p>
      <ErrorCallout />
      <div className="pg-layout">
        <aside className="pg-side">
          <div className="card">
            <h2>Setup</h2>
            <BackendPanel />
            <WorldPicker />
            <HistoryToggle />
            <SamplingPanel />
          </div>
        </aside>
        <div className="pg-main">
          <SystemPromptPanel />
          <div className="card">
            <h2>Context</h2>
            <ContextBar report={context} />
          </div>
          <Branches busy={busy} />
          <div className="pg-turns" aria-live="polite">
            {session.turns.map((t, i) => (
              <TurnCard
                key={i}
                turn={t}
                index={i}
                live={live}
                busy={busy}
                onEdit={(a, keep) => void editAction(i, a, keep)}
                onRetry={() => void runPending(i)}
                onStop={stop}
              />
            ))}
          </div>
          <ActionForm busy={busy} />
          <Summary />
          <SaveBar />
        </div>
      </div>
    </section>
  );
}
