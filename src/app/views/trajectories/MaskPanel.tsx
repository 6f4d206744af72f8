// Every threshold and ratio of the mask, editable, with the live category counts beside them.
// A field keeps what the user typed while it is invalid (with the reason next to it) and the
// last valid configuration stays in force, so a half-typed number never breaks the viewer.
import { useEffect, useId, useState } from 'react';
import type { MaskCategory, MaskConfig, MaskStats } from '../../../core/masking/index.ts';
import { CATEGORY_LABEL, CATEGORY_MEANING, categoryColor, MASK_CATEGORIES, pct } from '../../components/categories.ts';
import { useMaskSettings } from '../../stores/mask.ts';

type NumericKey = Exclude<keyof MaskConfig, 'ratios' | 'useOverrides'>;

interface FieldSpec {
  key: NumericKey;
  label: string;
  help: string;
  step: number;
  min: number;
  max?: number;
  integer?: boolean;
}

const GROUPS: { title: string; fields: FieldSpec[] }[] = [
  {
    title: 'Boilerplate',
    fields: [
      { key: 'boilerplateMinRecurrence', label: 'Min. recurrence', help: 'different actions answered by the same short text', step: 1, min: 1, integer: true },
      { key: 'boilerplateMaxChars', label: 'Max. length (chars)', help: 'longer recurring texts count as information', step: 10, min: 0, integer: true },
    ],
  },
  {
    title: 'Echo',
    fields: [
      { key: 'echoMinJaccard', label: 'Min. Jac', help: 'shared words / all words of both', step: 0.05, min: 0, max: 1 },
      { key: 'echoMaxNovelty', label: 'Max. Nov', help: 'share of new words allowed', step: 0.05, min: 0, max: 1 },
    ],
  },
  {
    title: 'Retrieval',
    fields: [
      { key: 'retrievalMinNovelty', label: 'Min. Nov', help: 'mostly new words', step: 0.05, min: 0, max: 1 },
      { key: 'retrievalMinRatio', label: 'Min. R', help: 'long: observation/action length', step: 0.5, min: 0 },
      { key: 'retrievalMaxOverlap', label: 'Max. OL', help: 'or short but sharing little with the action', step: 0.05, min: 0, max: 1 },
    ],
  },
  {
    title: 'Expansion',
    fields: [
      { key: 'expansionMinNovelty', label: 'Min. Nov', help: '', step: 0.05, min: 0, max: 1 },
      { key: 'expansionMinRatio', label: 'Min. R', help: '', step: 0.1, min: 0 },
      { key: 'expansionMinOverlap', label: 'Min. OL', help: 'restates part of the action', step: 0.05, min: 0, max: 1 },
    ],
  },
  {
    title: 'Transform',
    fields: [
      { key: 'transformMaxNovelty', label: 'Max. Nov', help: '', step: 0.05, min: 0, max: 1 },
      { key: 'transformMinOverlap', label: 'Min. OL', help: '', step: 0.05, min: 0, max: 1 },
    ],
  },
  {
    title: 'Action',
    fields: [
      { key: 'actionMaxWords', label: 'Max. distinct words', help: '', step: 1, min: 0, integer: true },
      { key: 'actionMaxRatio', label: 'Max. R', help: '', step: 0.5, min: 0 },
    ],
  },
];

/** Parses a user's number against its bounds; returns the value or why it is not acceptable. */
function parseField(text: string, spec: { min: number; max?: number; integer?: boolean }): number | string {
  if (text.trim() === '') return 'enter a number';
  const v = Number(text);
  if (!Number.isFinite(v)) return `"${text}" is not a number`;
  if (spec.integer && !Number.isInteger(v)) return 'must be a whole number';
  if (v < spec.min) return `must be at least ${spec.min}`;
  if (spec.max !== undefined && v > spec.max) return `must be at most ${spec.max}`;
  return v;
}

function NumberField({
  label,
  help,
  value,
  spec,
  onValid,
  slider,
}: {
  label: string;
  help?: string;
  value: number;
  spec: { min: number; max?: number; step: number; integer?: boolean };
  onValid(v: number): string[];
  slider?: boolean;
}) {
  const id = useId();
  const [text, setText] = useState(String(value));
  const [error, setError] = useState<string | null>(null);
  // Follow outside changes (reset, another tab) unless the user is mid-edit on an invalid value.
  useEffect(() => {
    setText((t) => (Number(t) === value ? t : String(value)));
    setError(null);
  }, [value]);
  const apply = (t: string) => {
    setText(t);
    const v = parseField(t, spec);
    if (typeof v === 'string') {
      setError(v);
      return;
    }
    const problems = onValid(v);
    setError(problems.length ? problems.join('; ') : null);
  };
  return (
    <div className="mask-field">
      <label htmlFor={id}>
        {label}
        {help ? <span className="muted small"> {help}</span> : null}
      </label>
      <div className="mask-input">
        {slider ? (
          <input
            type="range"
            min={spec.min}
            max={spec.max}
            step={spec.step}
            value={value}
            onChange={(e) => apply(e.target.value)}
            aria-label={`${label} slider`}
            tabIndex={0}
          />
        ) : null}
        <input
          id={id}
          type="number"
          inputMode="decimal"
          min={spec.min}
          max={spec.max}
          step={spec.step}
          value={text}
          onChange={(e) => apply(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? id + '-err' : undefined}
        />
      </div>
      {error ? (
        <p id={id + '-err'} className="error-text small" role="alert">
          {label}: {error}
        </p>
      ) : null}
    </div>
  );
}

export function MaskPanel({ stats }: { stats: MaskStats | null }) {
  const { config, update, reset } = useMaskSettings();
  const setNumber = (key: NumericKey) => (v: number) => update((c) => ({ ...c, [key]: v }));
  const setRatio = (cat: MaskCategory) => (v: number) => update((c) => ({ ...c, ratios: { ...c.ratios, [cat]: v } }));
  return (
    <aside className="mask-panel card" aria-labelledby="mask-title">
      <div className="card-head">
        <h2 id="mask-title">Loss mask</h2>
        <button type="button" className="secondary small" onClick={reset}>
          Reset to defaults
        </button>
      </div>
      {stats ? (
        <div className="mask-stats" data-testid="mask-stats">
          <p>
            {stats.overall.total.toLocaleString()} turns · mean loss weight{' '}
            <strong data-testid="mask-mean-weight">{stats.overall.meanWeight.toFixed(3)}</strong>
          </p>
          <table className="table compact">
            <tbody>
              {MASK_CATEGORIES.map((c) => (
                <tr key={c} title={CATEGORY_MEANING[c]}>
                  <th scope="row">
                    <span className="swatch" style={{ background: categoryColor(c) }} aria-hidden="true" /> {CATEGORY_LABEL[c]}
                  </th>
                  <td className="num" data-testid={`count-${c}`}>
                    {stats.overall.counts[c].toLocaleString()}
                  </td>
                  <td className="num">{pct(stats.overall.shares[c])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="loading">Computing categories…</p>
      )}
      <fieldset>
        <legend>Loss ratio per category</legend>
        {MASK_CATEGORIES.map((c) => (
          <NumberField
            key={c}
            label={`${CATEGORY_LABEL[c]} ratio`}
            value={config.ratios[c]}
            spec={{ min: 0, max: 1, step: 0.01 }}
            onValid={setRatio(c)}
            slider
          />
        ))}
      </fieldset>
      <fieldset>
        <legend>Thresholds (rules tried in this order)</legend>
        {GROUPS.map((g) => (
          <div key={g.title} className="mask-group">
            <h3>{g.title}</h3>
            {g.fields.map((f) => (
              <NumberField key={f.key} label={`${g.title} ${f.label}`} help={f.help} value={config[f.key]} spec={f} onValid={setNumber(f.key)} />
            ))}
          </div>
        ))}
        <label className="check">
          <input type="checkbox" checked={config.useOverrides} onChange={(e) => update((c) => ({ ...c, useOverrides: e.target.checked }))} /> Use loss weights
          fixed by the source (e.g. AgentInstruct loss flags)
        </label>
      </fieldset>
    </aside>
  );
}
