// Train view → Sim RL: the four-agent experiment (docs/method.md §13) in the jobs worker. The
// form picks the domain, task families, agents, world model and sizes; the experiment runs as a
// 'simrl' job and is stored after every evaluation, so a reload offers to resume it. The chart
// draws each agent's held-out success by RL step (greedy or sampled actions), with the untrained
// agent as a reference line; the table gives each agent's final success (greedy and sampled),
// one-sided p against the untrained and the imitation policy (McNemar's exact test on the shared
// held-out tasks), and the sim-to-real gap of its
// simulated episodes.
import { useEffect, useId, useMemo, useState } from 'react';
import { PRESETS } from '../../../core/model/config.ts';
import { taskFamilies } from '../../../envs/tasks/index.ts';
import { AGENT_ARMS, ARM_LABELS, needsWorld, type AgentArm } from '../../../train/agent/experiment.ts';
import { Field } from '../../components/Field.tsx';
import { LineChart } from '../../components/LineChart.tsx';
import { Options } from '../../components/Options.tsx';
import { type ExperimentSummary, useSimRlStore, worldKeyMissing } from '../../stores/simrl.ts';
import { useTrainStore } from '../../stores/train.ts';
import {
  SIMRL_DOMAINS,
  SIMRL_NUMBERS,
  SIMRL_REALS,
  HF_POLICY,
  armCurves,
  armResults,
  curvesXMax,
  defaultSimRlForm,
  evalPercent,
  experimentStage,
  followBudgets,
  formatP,
  simRlDraft,
  simulatedCheckFamilies,
  endpointWorldKey,
  worldChoices,
  type SimRlErrors,
  type SimRlForm,
  type SimRlNumber,
  type SimRlReal,
  type SuccessMeasure,
} from './simrl.ts';
import { ErrorCallout } from '../../components/ErrorCallout.tsx';
import { EndpointForm, keyStatus } from '../../components/EndpointForm.tsx';
import { useEndpointStore, type TypedKey } from '../../stores/endpoints.ts';
import { FolderInput } from '../../components/FolderInput.tsx';
import { folderName, HF_NOT_KEPT, type HfFolderFile } from '../../../train/hfFolder.ts';

/** What the p columns are. */
const P_TITLE =
  "one-sided p that the agent's final success beats the other's by more than chance: McNemar's exact test on the held-out tasks both played (Fisher's exact test of the counts for evaluations stored without per-task outcomes)";

/** The world picker's choice that opens the new-endpoint form. */
const ADD_ENDPOINT = 'add-endpoint';

const ARM_CLASS: Record<AgentArm, string> = { imitation: 'chart-s3', real: 'chart-s0', shuffled: 'chart-s5', model: 'chart-s1', 'model-real': 'chart-s4' };

function Checks<T extends string>({
  id,
  name,
  items,
  label,
  chosen,
  onChange,
}: {
  id: string;
  name: string;
  items: readonly T[];
  label(x: T): string;
  chosen: readonly T[];
  onChange(v: T[]): void;
}) {
  return (
    <div className="checks" id={id} role="group" aria-label={name}>
      {items.map((x) => (
        <label key={x} className="check">
          <input
            type="checkbox"
            checked={chosen.includes(x)}
            onChange={(e) => onChange(e.target.checked ? items.filter((y) => y === x || chosen.includes(y)) : chosen.filter((y) => y !== x))}
          />{' '}
          {label(x)}
        </label>
      ))}
    </div>
  );
}

function SimRlFormCard() {
  const { runs, live, create } = useSimRlStore();
  const worker = useTrainStore((s) => s.worker);
  const trainLive = useTrainStore((s) => s.live);
  const [form, setForm] = useState<SimRlForm>(() => defaultSimRlForm());
  const [errors, setErrors] = useState<SimRlErrors>({});
  const endpoints = useEndpointStore((s) => s.endpoints);
  const worlds = useMemo(() => worldChoices(runs, endpoints), [runs, endpoints]);
  const [addingEndpoint, setAddingEndpoint] = useState(false);
  // The families the world-model agents (when ticked) cannot be rewarded on: marked in the family list.
  const rewardable = simulatedCheckFamilies(form.domain);
  const unrewardable = needsWorld(form.arms) ? taskFamilies(form.domain).filter((f) => !rewardable.includes(f)) : [];
  // An edited field's error goes with the value it was about, and so do the errors that field's value was part of.
  // A change of domain or families brings the budgets they need, unless the person typed their own.
  const set = (patch: Partial<SimRlForm>) => {
    setForm((f) => followBudgets(f, { ...f, ...patch }));
    const stale = new Set(Object.keys(patch).flatMap((k) => [k, ...(ERRORS_ALSO_ABOUT[k as keyof SimRlForm] ?? [])]));
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !stale.has(k))));
  };
  /** One text field of the form: a whole number (numeric keypad) or a real one (decimal keypad). */
  const input = (k: SimRlNumber | SimRlReal, f: { label: string; hint?: string }, inputMode: 'numeric' | 'decimal') => (
    <Field key={k} id={`simrl-${k}`} label={f.label} error={errors[k]} hint={f.hint}>
      <input
        id={`simrl-${k}`}
        type="text"
        inputMode={inputMode}
        value={form[k]}
        onChange={(e) => set({ [k]: e.target.value })}
        aria-invalid={errors[k] ? true : undefined}
        aria-describedby={errors[k] ? `simrl-${k}-error` : `simrl-${k}-hint`}
      />
    </Field>
  );
  const number = (k: SimRlNumber) => input(k, SIMRL_NUMBERS[k], 'numeric');
  const real = (k: SimRlReal) => input(k, SIMRL_REALS[k], 'decimal');
  const start = () => {
    const checked = simRlDraft(form, worlds);
    if ('errors' in checked) return setErrors(checked.errors);
    setErrors({});
    void create(checked.draft);
  };
  const busy = !!live || !!trainLive;
  return (
    <form
      className="card"
      aria-labelledby="simrl-form-title"
      data-testid="simrl-form"
      onSubmit={(e) => {
        e.preventDefault();
        start();
      }}
    >
      <h2 id="simrl-form-title">New Sim RL experiment</h2>
      <p className="muted small">
        Four agents from one imitation policy, measured on the same held-out tasks in the real environment: no RL, RL in the real environment, RL in a world
        model, and RL in the world model then in the real environment.
      </p>
      <Field id="simrl-name" label="Experiment name" hint="optional">
        <input id="simrl-name" type="text" value={form.name} onChange={(e) => set({ name: e.target.value })} />
      </Field>
      <Field id="simrl-domain" label="Task domain" error={errors.domain}>
        <select id="simrl-domain" value={form.domain} onChange={(e) => set({ domain: e.target.value, families: taskFamilies(e.target.value).slice(0, 1) })}>
          <Options items={SIMRL_DOMAINS} />
        </select>
      </Field>
      <Field id="simrl-families" label="Task families" error={errors.families} hint="easiest first">
        <Checks
          id="simrl-families"
          name="Task families"
          items={taskFamilies(form.domain)}
          label={(x) => (unrewardable.includes(x) ? `${x} (no simulated check)` : x)}
          chosen={form.families}
          onChange={(families) => set({ families })}
        />
      </Field>
      <Field id="simrl-arms" label="Agents" error={errors.arms}>
        <Checks id="simrl-arms" name="Agents" items={AGENT_ARMS} label={(a) => ARM_LABELS[a]} chosen={form.arms} onChange={(arms) => set({ arms })} />
      </Field>
      <Field
        id="simrl-world"
        label="World model"
        error={errors.world}
        hint={
          needsWorld(form.arms)
            ? 'answers the world-model agents’ actions (greedy); a stored checkpoint (the quick recipe with task play of these families trains one that has seen their check), an endpoint (lwm serve serves any world model at one), or the copy-last baseline'
            : 'no agent picked needs one'
        }
      >
        <select
          id="simrl-world"
          value={addingEndpoint ? ADD_ENDPOINT : form.world}
          disabled={!needsWorld(form.arms)}
          onChange={(e) => {
            setAddingEndpoint(e.target.value === ADD_ENDPOINT);
            if (e.target.value !== ADD_ENDPOINT) set({ world: e.target.value });
          }}
        >
          <option value="copy-last">copy-last (baseline: repeats the last observation)</option>
          {worlds.some((w) => w.ref.kind === 'checkpoint') ? (
            <optgroup label="Stored checkpoints">
              {worlds
                .filter((w) => w.ref.kind === 'checkpoint')
                .map((w) => (
                  <option key={w.key} value={w.key}>
                    {w.label}
                  </option>
                ))}
            </optgroup>
          ) : null}
          {worlds.some((w) => w.ref.kind === 'endpoint') ? (
            <optgroup label="Endpoints">
              {endpoints.map((ep) => (
                <option key={ep.id} value={endpointWorldKey(ep.id)}>
                  {worlds.find((w) => w.key === endpointWorldKey(ep.id))?.label} ({keyStatus(ep.id)})
                </option>
              ))}
            </optgroup>
          ) : null}
          <option value={ADD_ENDPOINT}>Add an endpoint…</option>
        </select>
      </Field>
      {addingEndpoint && needsWorld(form.arms) ? (
        <EndpointForm
          initial={null}
          label="World model: new endpoint"
          onDone={(id) => {
            setAddingEndpoint(false);
            if (id) set({ world: endpointWorldKey(id) });
          }}
        />
      ) : null}
      <Field
        id="simrl-preset"
        label="Policy model"
        error={errors.preset}
        hint={form.preset === HF_POLICY ? 'a Hugging Face model in its chat format' : 'a fresh model of this preset'}
      >
        <select id="simrl-preset" value={form.preset} onChange={(e) => set({ preset: e.target.value })}>
          <Options items={Object.keys(PRESETS)} />
          <option value={HF_POLICY}>Hugging Face folder…</option>
        </select>
      </Field>
      {form.preset === HF_POLICY ? (
        <fieldset className="hf-start" data-testid="simrl-hf">
          <legend>Hugging Face policy</legend>
          <p className="small">
            Llama, Qwen2 or Qwen3 with a chat template, the model folder itself: the agent is prompted in its chat format (a LoRA policy&apos;s adapter folder
            goes on from the command line, <code>lwm agent train --policy OUT/policy</code>). {HF_NOT_KEPT}
          </p>
          <FolderInput
            label="Open the policy's Hugging Face folder"
            text="Open a Hugging Face folder…"
            testId="simrl-hf-input"
            onFiles={(hfFiles) => set({ hfFiles })}
          />
          {form.hfFiles.length ? (
            <p className="small" data-testid="simrl-hf-folder">
              <strong>{folderName(form.hfFiles) ?? 'the picked files'}</strong> ({form.hfFiles.length} files)
            </p>
          ) : null}
          {errors.hfFiles ? (
            <p className="error-text small" role="alert">
              {errors.hfFiles}
            </p>
          ) : null}
          <div className="field-grid">
            <Field id="simrl-loraRank" label="LoRA rank" error={errors.loraRank} hint="blank: fine-tune every weight">
              <input id="simrl-loraRank" type="text" inputMode="numeric" value={form.loraRank} onChange={(e) => set({ loraRank: e.target.value })} />
            </Field>
            <Field id="simrl-memoryGiB" label="GPU memory (GiB)" error={errors.memoryGiB} hint="WebGPU does not report it: what the run may take">
              <input id="simrl-memoryGiB" type="text" inputMode="decimal" value={form.memoryGiB} onChange={(e) => set({ memoryGiB: e.target.value })} />
            </Field>
          </div>
        </fieldset>
      ) : null}
      <div className="field-grid">
        {(Object.keys(SIMRL_NUMBERS) as SimRlNumber[]).map(number)}
        {(Object.keys(SIMRL_REALS) as SimRlReal[]).map(real)}
      </div>
      <div className="toolbar">
        <button type="submit" disabled={busy || worker !== 'ready'} title={busy ? 'A job is running: start when it has ended' : undefined}>
          Start experiment
        </button>
      </div>
    </form>
  );
}

function Curves({ e }: { e: ExperimentSummary }) {
  const v = e.experiment;
  const [measure, setMeasure] = useState<SuccessMeasure>('greedy');
  const series = armCurves(v, measure).map((c) => ({ name: ARM_LABELS[c.arm], points: c.points, className: ARM_CLASS[c.arm], dots: true }));
  const base = v.untrained ? evalPercent(v.untrained, measure) : null;
  const references = base === null ? [] : [{ name: `untrained (${base.toFixed(0)}%)`, y: base, className: 'chart-ref' }];
  const markers = v.spec.arms.includes('model-real') ? [{ x: v.spec.train.rlSteps, label: 'then real' }] : [];
  return (
    <>
      <fieldset className="simrl-measure">
        <legend>Held-out episodes played with</legend>
        <label className="check">
          <input type="radio" name="simrl-measure" checked={measure === 'greedy'} onChange={() => setMeasure('greedy')} />
          <span>greedy actions</span>
        </label>
        <label className="check">
          <input type="radio" name="simrl-measure" checked={measure === 'sampled'} onChange={() => setMeasure('sampled')} />
          <span>actions sampled at temperature {v.spec.train.temperature} (what RL trains)</span>
        </label>
      </fieldset>
      <LineChart
        title={`Held-out success (%) by RL step, ${measure === 'greedy' ? 'greedy' : 'sampled'} actions`}
        testId="simrl-chart"
        series={series}
        references={references}
        markers={markers}
        xMax={curvesXMax(v)}
        yFixed={[0, 100]}
      />
    </>
  );
}

/** Successes of n as a table cell; '—' where there is no count (no evaluation, or a sampled one stored before evaluations had it). */
function successCell(successes: number | undefined, n: number | undefined): string {
  if (successes === undefined || n === undefined) return '—';
  return `${((100 * successes) / n).toFixed(0)}% (${successes}/${n})`;
}

function Results({ e }: { e: ExperimentSummary }) {
  const rows = armResults(e.experiment);
  // With the shuffled-reward control: p that an RL agent beats it, greedy and sampled.
  const control = e.experiment.spec.arms.includes('shuffled');
  return (
    <table className="table small" data-testid="simrl-results">
      <thead>
        <tr>
          <th>Agent</th>
          <th className="num">Final success</th>
          <th className="num" title="the same held-out tasks, actions sampled at the rollout temperature">
            Sampled
          </th>
          <th className="num" title={P_TITLE}>
            p vs untrained
          </th>
          <th className="num" title={P_TITLE}>
            p vs imitation
          </th>
          {control ? (
            <th className="num" title={`${P_TITLE}; against the shuffled-reward control's: greedy / sampled`}>
              p vs shuffled reward
            </th>
          ) : null}
          <th className="num" title="share of simulated episodes whose simulated success the real check disagreed with">
            Sim-to-real gap
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.arm} data-arm={r.arm}>
            <td>{ARM_LABELS[r.arm]}</td>
            <td className="num">{successCell(r.final?.successes, r.final?.n)}</td>
            <td className="num">{successCell(r.final?.sampledSuccesses, r.final?.n)}</td>
            <td className="num">{formatP(r.pVsUntrained)}</td>
            <td className="num">{formatP(r.pVsImitation)}</td>
            {control ? <td className="num">{r.pVsShuffled === null ? '—' : `${formatP(r.pVsShuffled)} / ${formatP(r.pSampledVsShuffled)}`}</td> : null}
            <td className="num">{r.simToRealGap === null ? '—' : `${(100 * r.simToRealGap).toFixed(0)}% of ${r.simulatedEpisodes}`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ExperimentCard() {
  const { list, selectedId, select, live, stop, remove, logs } = useSimRlStore();
  const e = list.find((x) => x.id === selectedId) ?? list[0];
  if (!e) return null;
  const running = live?.expId === e.id;
  const t = e.experiment.spec.train;
  return (
    <section className="card" aria-labelledby="simrl-exp-title" data-testid="simrl-experiment">
      <div className="card-head">
        <h2 id="simrl-exp-title">{e.name}</h2>
        {list.length > 1 ? (
          <select aria-label="Experiment" value={e.id} onChange={(ev) => select(ev.target.value)}>
            {list.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name} ({x.state})
              </option>
            ))}
          </select>
        ) : null}
      </div>
      <p className="small" data-testid="simrl-status">
        <strong>{running ? (live?.state === 'stopping' ? 'stopping' : 'running') : e.state}</strong> · {experimentStage(e.experiment)}
        {running && live?.step ? ` · ${live.step.arm} step ${live.step.step}` : ''} · {t.domain} ({t.families.join(', ')}), {policyName(e)}, T {t.T}
        {e.experiment.spec.world ? ` · world model ${e.experiment.spec.world}` : ''}
      </p>
      {e.error ? <p className="error-text small">{e.error}</p> : null}
      <Curves e={e} />
      <Results e={e} />
      <div className="toolbar">
        {running ? (
          <button type="button" className="secondary" onClick={stop} disabled={live?.state === 'stopping'}>
            Stop
          </button>
        ) : e.state !== 'done' ? (
          <ResumeButton e={e} label="Resume" />
        ) : null}
        <button type="button" className="secondary" disabled={running} onClick={() => void remove(e.id)}>
          Delete
        </button>
      </div>
      {running && logs.length ? <pre className="log small">{logs.slice(-6).join('\n')}</pre> : null}
    </section>
  );
}

/** The policy an experiment trains: a preset's fresh model, or a Hugging Face folder (with its LoRA rank). */
function policyName(e: ExperimentSummary): string {
  const p = e.experiment.spec.policy;
  if (!p) return e.experiment.spec.train.preset;
  return `${p.folder}${p.lora ? ` (LoRA rank ${p.lora.rank})` : ' (fine-tuned whole)'}`;
}

/**
 * Resume, with what the page lost in a reload: the Hugging Face policy's folder (picked again; the
 * worker checks it is the same folder) and the endpoint world's key (typed again, blank if it
 * needs none; kept as the Playground keeps keys).
 */
function ResumeButton({ e, label }: { e: ExperimentSummary; label: string }) {
  const { resume, live, folders } = useSimRlStore();
  useEndpointStore((s) => s.endpoints); // a key given elsewhere on this page hides the field
  const [typed, setTyped] = useState<TypedKey>({ key: '', remember: false });
  const keyId = useId();
  const go = (folder?: Parameters<typeof resume>[1]) => {
    void resume(e.id, folder, typed);
    setTyped({ key: '', remember: false });
  };
  const policy = e.policy;
  const keyField =
    e.world?.kind === 'endpoint' && worldKeyMissing(e.world) ? (
      <div className="field">
        <label htmlFor={keyId}>
          API key for the world model ({e.world.endpoint.model} at {e.world.endpoint.baseUrl})
        </label>
        <input
          id={keyId}
          type="password"
          autoComplete="off"
          placeholder="blank if it needs none"
          value={typed.key}
          onChange={(ev) => setTyped({ ...typed, key: ev.target.value })}
        />
        <label className="check small">
          <input type="checkbox" checked={typed.remember} onChange={(ev) => setTyped({ ...typed, remember: ev.target.checked })} />
          <span>Remember the key on this device</span>
        </label>
      </div>
    ) : null;
  if (policy && !folders[e.id])
    return (
      <>
        {keyField}
        <FolderInput
          label={`${label}: pick ${policy.folder.name} again`}
          text={`Pick ${policy.folder.name} again to resume…`}
          testId="simrl-resume-folder"
          onFiles={(files: HfFolderFile[]) => go({ ...withName(folderName(files)), files, memoryGiB: policy.memoryGiB })}
        />
      </>
    );
  return (
    <>
      {keyField}
      <button type="button" disabled={!!live} onClick={() => go()}>
        {label}
      </button>
    </>
  );
}

const withName = (name: string | null) => (name === null ? {} : { name });

function InterruptedExperiments() {
  const { interrupted, dismissInterrupted } = useSimRlStore();
  return (
    <>
      {interrupted.map((e) => (
        <div key={e.id} className="callout warn" role="region" aria-label="Interrupted experiment" data-testid="simrl-resume-offer">
          <p>
            <strong>{e.name}</strong> was running when the page closed ({experimentStage(e.experiment)}). It goes on from its last stored evaluation.
          </p>
          <div className="toolbar">
            <ResumeButton e={e} label="Resume experiment" />
            <button type="button" className="secondary" onClick={() => void dismissInterrupted(e.id)}>
              Leave it stopped
            </button>
          </div>
        </div>
      ))}
    </>
  );
}

/** Errors that also depend on another field's value: its edit clears them with its own (simRlDraft's cross-field checks). */
const ERRORS_ALSO_ABOUT: Partial<Record<keyof SimRlForm, (keyof SimRlForm)[]>> = {
  domain: ['families', 'T', 'maxNewTokens'],
  families: ['T', 'maxNewTokens'],
  arms: ['families', 'world'],
  trainTasks: ['T', 'maxNewTokens'],
  maxNewTokens: ['T'],
  rlSteps: ['evalEvery'],
  preset: ['hfFiles', 'loraRank', 'memoryGiB'],
};

export function SimRlPanel() {
  const { init, error, dismissError } = useSimRlStore();
  useEffect(() => {
    void init();
  }, [init]);
  return (
    <section className="simrl" aria-labelledby="simrl-title" data-testid="simrl-panel">
      <h2 id="simrl-title">Sim RL</h2>
      <InterruptedExperiments />
      <ErrorCallout error={error} onDismiss={dismissError} testId="simrl-error" />
      <div className="train-layout">
        <SimRlFormCard />
        <ExperimentCard />
      </div>
    </section>
  );
}
