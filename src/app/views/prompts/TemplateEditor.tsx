// The template editor: a draft (a template's Jinja text, or one domain's) in Monaco with live
// validation, a preview of the exact training text for a chosen trajectory and turn, the
// version lineage with a diff between any two versions, and the stage → template mix.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import type { Trajectory } from '../../../core/schema/types.ts';
import { turnSample, type TurnSample } from '../../../core/turns/index.ts';
import { checkDistribution, renderSample, type TemplateDistribution, type TrainingStage } from '../../../core/templates/index.ts';
import { fitTurn } from '../../../core/templates/fit.ts';
import { CodeEditor, DiffEditor } from '../../components/monaco/CodeEditor.tsx';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { Options } from '../../components/Options.tsx';
import { ScrollTable, type Column } from '../../components/Table.tsx';
import { useDatasetStore } from '../../stores/datasets.ts';
import { useTokenizerStore } from '../../stores/tokenizer.ts';
import { EDITABLE_STAGES, templateSet, useTemplateStore } from '../../stores/templates.ts';
import { ProblemList } from './ProblemList.tsx';
import { DomainChooser, ImportFolder } from './ImportFolder.tsx';
import { parseTemplate, templateText, type TemplateBody } from './validation.ts';

const STAGE_LABEL: Record<string, string> = { cpt: 'CPT', sft: 'SFT', rl: 'RL (GSPO)' };

/** Context kept in view above the highlighted target: a few lines of what leads up to it. */
const TARGET_MARGIN_PX = 120;

function Preview({ template, trajectories }: { template: TemplateBody | null; trajectories: Trajectory[] }) {
  const [ti, setTi] = useState(0);
  const [turnText, setTurnText] = useState('1');
  const tokenizer = useTokenizerStore((s) => s.tokenizer);
  const kind = useTokenizerStore((s) => s.kind);
  const loadedId = useDatasetStore((s) => s.loadedId);
  const ensure = useTokenizerStore((s) => s.ensure);
  useEffect(() => {
    if (loadedId && trajectories.length) ensure(loadedId, trajectories);
  }, [loadedId, trajectories, ensure]);
  const t = trajectories[Math.min(ti, trajectories.length - 1)];
  const turn = Number(turnText);
  const turnError = !t ? null : !Number.isInteger(turn) || turn < 1 || turn > t.turns.length ? `Turn must be a whole number from 1 to ${t.turns.length}` : null;
  const rendered = useMemo(() => {
    if (!template || !t || turnError) return null;
    const draft = { ...template, version: 'draft' };
    const sample = turnSample(t, turn - 1);
    const r = renderSample(draft, sample);
    // Counted as training encodes the row: the template's text with its special tokens, the sample's as text.
    const tokens = fitTurn(tokenizer, draft, sample, { budget: Number.MAX_SAFE_INTEGER }).ids.length;
    return { ...r, tokens, targetTokens: tokenizer.encode(sample.targetObservation, { allowSpecial: false }).length };
  }, [template, t, turn, turnError, tokenizer]);
  // The target sits after a long context: keep it in view as the sample or template changes.
  const pre = useRef<HTMLPreElement>(null);
  const targetStart = rendered?.targetStart;
  useLayoutEffect(() => {
    const mark = pre.current?.querySelector('mark');
    if (pre.current && mark) pre.current.scrollTop = Math.max(0, mark.offsetTop - TARGET_MARGIN_PX); // .preview is the offsetParent
  }, [targetStart, ti, turn]);

  if (!t) return <p className="muted">Load a dataset to preview the template.</p>;
  return (
    <article className="card" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <div className="toolbar">
        <div className="field" style={{ flex: '1 1 14rem' }}>
          <label htmlFor="preview-trajectory">Trajectory</label>
          <select id="preview-trajectory" value={ti} onChange={(e) => setTi(Number(e.target.value))}>
            <Options items={trajectories} value={(_, i) => String(i)} label={(x) => `${x.id} (${x.domain}, ${x.turns.length} turns)`} />
          </select>
        </div>
        <div className="field">
          <label htmlFor="preview-turn">Target turn</label>
          <input
            id="preview-turn"
            type="number"
            min={1}
            max={t.turns.length}
            value={turnText}
            onChange={(e) => setTurnText(e.target.value)}
            aria-invalid={turnError ? true : undefined}
            style={{ width: '6rem' }}
          />
        </div>
      </div>
      {turnError ? (
        <p className="error-text" role="alert">
          {turnError}
        </p>
      ) : null}
      {!template ? <p className="error-text">Fix the template's problems to see the preview.</p> : null}
      {rendered ? (
        <>
          <p className="small" data-testid="preview-stats">
            <strong data-testid="preview-tokens">{rendered.tokens.toLocaleString()} tokens</strong> (
            {kind === 'bpe' ? `BPE ${tokenizer.vocabSize.toLocaleString()} trained on this dataset` : 'byte tokens'}), of which{' '}
            {rendered.targetTokens.toLocaleString()} in the target · {rendered.text.length.toLocaleString()} characters
          </p>
          <pre
            ref={pre}
            className="preview"
            role="figure"
            data-testid="preview-text"
            aria-label="Rendered training text; the target observation is highlighted"
          >
            {rendered.text.slice(0, rendered.targetStart)}
            <mark data-testid="preview-target">{rendered.text.slice(rendered.targetStart, rendered.targetEnd)}</mark>
            {rendered.text.slice(rendered.targetEnd)}
          </pre>
        </>
      ) : null}
    </article>
  );
}

/** A version's texts for the diff: the default text, then each domain's under a comment line. */
function diffText(t: TemplateBody): string {
  return (
    templateText({ ...t, version: '' }) +
    Object.entries(t.domains ?? {})
      .map(([d, x]) => `\n{# ---- text for ${d} ---- #}\n${x}`)
      .join('')
  );
}

function Versions({ selected, setSelected }: { selected: [string, string]; setSelected(s: [string, string]): void }) {
  const versions = useTemplateStore((s) => s.versions);
  const byName = useMemo(() => new Map(versions.map((v) => [v.version, v])), [versions]);
  const a = byName.get(selected[0]);
  const b = byName.get(selected[1]);
  return (
    <article className="card wide" aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ScrollTable className="table versions" testId="versions" columns={['Version', 'Parent', 'Note', 'Saved', '']}>
        {versions.map((v) => (
          <tr key={v.version}>
            <th scope="row" className="mono">
              {v.version}
            </th>
            <td className="mono">{v.parent ?? '—'}</td>
            <td>{v.note}</td>
            <td>{v.builtin ? 'built in' : new Date(v.createdAt).toLocaleString()}</td>
            <td>
              <Link href={`/optimize/${encodeURIComponent(v.version)}`} aria-label={`Optimize ${v.version}`}>
                Optimize
              </Link>
            </td>
          </tr>
        ))}
      </ScrollTable>
      <h3>Compare two versions</h3>
      <div className="toolbar">
        {(['Original', 'Modified'] as const).map((label, k) => (
          <div className="field" key={label}>
            <label htmlFor={`diff-${k}`}>{label}</label>
            <select id={`diff-${k}`} value={selected[k]} onChange={(e) => setSelected(k === 0 ? [e.target.value, selected[1]] : [selected[0], e.target.value])}>
              <Options items={versions} value={(v) => v.version} label={(v) => v.version} />
            </select>
          </div>
        ))}
      </div>
      {a && b ? (
        <DiffEditor
          original={diffText(a.template)}
          modified={diffText(b.template)}
          ariaLabel={`Differences between ${a.version} and ${b.version}`}
          testId="diff-editor"
        />
      ) : null}
    </article>
  );
}

function StageMix() {
  const versions = useTemplateStore((s) => s.versions);
  const stages = useTemplateStore((s) => s.stages);
  const setStage = useTemplateStore((s) => s.setStage);
  const [texts, setTexts] = useState<Record<string, Record<string, string>>>({});
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  // Version names are the user's: look them up as own keys only (a version may be named `constructor`).
  const own = <T,>(o: Record<string, T> | undefined, k: string): T | undefined => (o && Object.hasOwn(o, k) ? o[k] : undefined);
  const cell = (stage: string, v: string) => own(texts[stage], v) ?? String(own(stages[stage as TrainingStage], v) ?? 0);
  const change = (stage: TrainingStage, version: string, value: string) => {
    const row = { ...Object.fromEntries(versions.map((v) => [v.version, cell(stage, v.version)])), [version]: value };
    setTexts({ ...texts, [stage]: row });
    const dist: TemplateDistribution = Object.create(null);
    const problems: string[] = [];
    for (const [v, s] of Object.entries(row)) {
      const w = Number(s);
      if (s.trim() === '' || !Number.isFinite(w) || w < 0) problems.push(`${v}: weight must be a number ≥ 0, got "${s}"`);
      else if (w > 0) dist[v] = w;
    }
    if (!problems.length) problems.push(...checkDistribution(dist, templateSet(versions)));
    if (!problems.length) problems.push(...setStage(stage, dist));
    setErrors({ ...errors, [stage]: problems });
  };
  return (
    <article className="card wide" aria-labelledby="mix-title">
      <h2 id="mix-title">Template mix per training stage</h2>
      <p className="muted small">Each sample of a stage is rendered with a template drawn by these weights (relative; they must sum to more than 0).</p>
      <ScrollTable
        className="table dist-table"
        testId="stage-mix"
        columns={['Stage', ...versions.map((v): Column => ({ label: v.version, className: 'mono', key: `v:${v.version}` }))]}
      >
        {EDITABLE_STAGES.map((stage) => (
          <tr key={stage}>
            <th scope="row">{STAGE_LABEL[stage]}</th>
            {versions.map((v) => (
              <td key={v.version}>
                <input
                  type="number"
                  min={0}
                  step={0.1}
                  value={cell(stage, v.version)}
                  onChange={(e) => change(stage, v.version, e.target.value)}
                  aria-label={`${STAGE_LABEL[stage]} weight of ${v.version}`}
                  aria-invalid={errors[stage]?.length ? true : undefined}
                />
              </td>
            ))}
          </tr>
        ))}
      </ScrollTable>
      {EDITABLE_STAGES.map((s) =>
        errors[s]?.length ? (
          <p key={s} className="error-text small" role="alert">
            {STAGE_LABEL[s]}: {errors[s].join('; ')} (the last valid mix stays in use)
          </p>
        ) : null,
      )}
    </article>
  );
}

/** How much of a version's note the version picker shows. */
const NOTE_PREVIEW_CHARS = 40;
/** A version's note is a line of what changed, not a document. */
const MAX_NOTE_CHARS = 300;

/** The version the draft starts from, and the button that drops the draft's changes. */
function BaseChooser({ base, dirty, onSwitch }: { base: string; dirty: boolean; onSwitch(version: string): void }) {
  const versions = useTemplateStore((s) => s.versions);
  const setDraft = useTemplateStore((s) => s.setDraft);
  return (
    <div className="toolbar">
      <div className="field">
        <label htmlFor="template-base">Start from</label>
        <select id="template-base" value={base} onChange={(e) => onSwitch(e.target.value)}>
          <Options items={versions} value={(v) => v.version} label={(v) => `${v.version}${v.note ? ` — ${v.note.slice(0, NOTE_PREVIEW_CHARS)}` : ''}`} />
        </select>
      </div>
      <button type="button" className="secondary" disabled={!dirty} onClick={() => setDraft(null)}>
        Discard changes
      </button>
    </div>
  );
}

/** The note and the button that saves the draft as a new version; says which version it became or why it failed. */
function SaveVersion({ base, disabled, save }: { base: string; disabled: boolean; save(note: string): Promise<string> }) {
  const [note, setNote] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  const onSave = async () => {
    if (disabled) return;
    setSaveError(null);
    try {
      const v = await save(note.trim() || `derived from ${base}`);
      setNote('');
      setSaved(v);
    } catch (e) {
      setSaveError(`Saving failed: ${(e as Error).message}`);
    }
  };
  return (
    <>
      <div className="toolbar">
        <div className="field" style={{ flex: '1 1 14rem' }}>
          <label htmlFor="version-note">Note for the new version</label>
          <input
            id="version-note"
            type="text"
            value={note}
            onChange={(e) => setNote(e.target.value)}
            placeholder={`what changed since ${base}`}
            maxLength={MAX_NOTE_CHARS}
          />
        </div>
        <button type="button" onClick={() => void onSave()} disabled={disabled}>
          Save as new version
        </button>
      </div>
      {saved ? (
        <p role="status" className="small">
          Saved as <strong>{saved}</strong>.
        </p>
      ) : null}
      {saveError ? (
        <p className="error-text" role="alert">
          {saveError}
        </p>
      ) : null}
    </>
  );
}

function DiscardDialog({ open, what, onCancel, onConfirm }: { open: boolean; what: string; onCancel(): void; onConfirm(): void }) {
  return (
    <ConfirmDialog open={open} title="Discard your changes?" confirmLabel="Discard and switch" onCancel={onCancel} onConfirm={onConfirm}>
      <p>The draft has unsaved changes to {what}. Save it as a new version first to keep them.</p>
    </ConfirmDialog>
  );
}

/** A few samples the draft must render: the last turn of the first trajectory of each domain. */
function checkSamples(trajectories: Trajectory[]): TurnSample[] {
  const seen = new Set<string>();
  const out: TurnSample[] = [];
  for (const t of trajectories) {
    if (seen.has(t.domain) || !t.turns.length) continue;
    seen.add(t.domain);
    out.push(turnSample(t, t.turns.length - 1));
  }
  return out;
}

export function TemplateEditor() {
  const { versions, status, error, draft, setDraft, createVersion, load } = useTemplateStore();
  const trajectories = useDatasetStore((s) => s.trajectories);
  const [pendingBase, setPendingBase] = useState<{ version: string; domain: string | null } | null>(null);
  const [compare, setCompare] = useState<[string, string]>(['v0', 'v0']);
  useEffect(() => {
    if (status === 'idle') void load();
  }, [status, load]);

  const base = versions.find((v) => v.version === (draft?.base ?? 'v0')) ?? versions[0];
  const domain = draft?.domain && base?.template.domains && Object.hasOwn(base.template.domains, draft.domain) ? draft.domain : null;
  const baseText = base ? templateText(base.template, domain) : '';
  const text = draft?.text ?? baseText;
  const dirty = text !== baseText;
  const samples = useMemo(() => checkSamples(trajectories), [trajectories]);
  const parsed = useMemo(() => (base ? parseTemplate(text, base.template, domain, samples) : { template: null, problems: [] }), [text, base, domain, samples]);
  useEffect(() => {
    // Compare the newest version with v0 by default, as the lineage grows.
    if (versions.length) setCompare((c) => (c[0] === 'v0' && c[1] === 'v0' ? ['v0', versions[versions.length - 1].version] : c));
  }, [versions]);

  if (status === 'error')
    return (
      <div className="callout error" role="alert">
        {error}
      </div>
    );
  if (!base) return <p className="loading">Loading template versions…</p>;

  const switchTo = (v: string, d: string | null) =>
    setDraft({ base: v, text: templateText(useTemplateStore.getState().versions.find((x) => x.version === v)!.template, d), domain: d }); // the store's list: a version just created is not in this render's `versions`
  const save = async (note: string) => {
    const v = await createVersion(parsed.template!, base.version, note);
    setDraft({ base: v, text, domain });
    setCompare(['v0', v]);
    return v;
  };
  const imported = async (template: TemplateBody, note: string) => {
    const v = await createVersion(template, base.version, note);
    switchTo(v, null);
    setCompare([base.version, v]);
    return v;
  };
  const ask = (v: string, d: string | null) => (dirty ? setPendingBase({ version: v, domain: d }) : switchTo(v, d));

  return (
    <>
      <div className="prompt-layout">
        <article className="card" aria-labelledby="template-title">
          <h2 id="template-title">Template</h2>
          <BaseChooser base={base.version} dirty={dirty} onSwitch={(v) => ask(v, null)} />
          <DomainChooser domains={Object.keys(base.template.domains ?? {})} domain={domain} onSwitch={(d) => ask(base.version, d)} />
          <CodeEditor
            value={text}
            onChange={(t) => setDraft({ base: base.version, text: t, domain })}
            language="lwm-template"
            markers={parsed.problems}
            ariaLabel="Prompt template (Jinja text)"
            testId="template-editor"
          />
          <p className="muted small">
            A Jinja text: <code>{'{{ task_description }}'}</code>, <code>{'{% if initial_state %}…{% endif %}'}</code>,{' '}
            <code>{'{% for turn in history %}…{% endfor %}'}</code>, <code>{'{{ action }}'}</code>; type <code>{'{{'}</code> or press Ctrl+Space for the
            variable names (docs/templates.md).
          </p>
          {parsed.problems.length ? <ProblemList problems={parsed.problems} testId="template-problems" live /> : null}
          <SaveVersion base={base.version} disabled={!parsed.template || !dirty} save={save} />
          <ImportFolder base={base.template} onImport={imported} />
        </article>
        <Preview template={parsed.template} trajectories={trajectories} />
      </div>
      <div className="cards" style={{ marginTop: '1rem' }}>
        <Versions selected={compare} setSelected={setCompare} />
        <StageMix />
      </div>
      <DiscardDialog
        open={pendingBase !== null}
        what={`${base.version}${domain ? ` (${domain})` : ''}`}
        onCancel={() => setPendingBase(null)}
        onConfirm={() => {
          if (pendingBase && versions.some((x) => x.version === pendingBase.version)) switchTo(pendingBase.version, pendingBase.domain);
          setPendingBase(null);
        }}
      />
    </>
  );
}
