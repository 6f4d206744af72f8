// The System view's Storage card: what the app keeps in this browser by kind (datasets, runs,
// checkpoints, benches, prompt optimizations, Sim RL experiments, template versions, cached models and files), each
// kind's count and size, the origin's usage against its quota, whether the browser keeps it
// under pressure; a kind's items on request, and deleting an item or a whole kind after a
// confirmation that names what goes (and, for a dataset, what stays that used it).
import { Fragment, useEffect, useRef, useState } from 'react';
import { formatBytes } from '../../../storage/quota.ts';
import { DELETABLE, KIND_LABELS, type KindUsage, type StoredItem, type StoredKind } from '../../../storage/usage.ts';
import { ConfirmDialog } from '../../components/ConfirmDialog.tsx';
import { ACTIONS_COLUMN, ScrollTable, type Column } from '../../components/Table.tsx';
import { useStorageStore } from '../../stores/storage.ts';
import { ErrorCallout } from '../../components/ErrorCallout.tsx';

/** One item of a kind, for buttons and titles. */
const ITEM: Record<StoredKind, string> = {
  datasets: 'dataset',
  runs: 'run',
  checkpoints: 'checkpoint',
  benches: 'bench',
  optimizations: 'prompt optimization',
  experiments: 'Sim RL experiment',
  templates: 'template version',
  caches: 'cache',
};

/** Where a kind is kept, under its name. */
const WHERE: Record<StoredKind, string> = {
  datasets: 'trajectories and their cached tokenizers',
  runs: 'records and metric history',
  checkpoints: 'weights and optimizer state of each run',
  benches: 'samples, predictions and judgements',
  optimizations: 'rounds, candidates and scores',
  experiments: 'curves, results and the policies to resume from',
  templates: 'the prompt lineage; edited in the Prompts view',
  caches: 'Cache Storage caches and private files, by name; a model fetched from the Hugging Face Hub by its id',
};

interface Pending {
  kind: StoredKind;
  items: StoredItem[];
  all: boolean;
}

/** A share of the quota: whole percent, one decimal under 10%, and "under 0.1%" for a sliver. */
function percent(part: number, whole: number): string {
  const p = (100 * part) / whole;
  if (p > 0 && p < 0.1) return 'under 0.1%';
  return `${p.toFixed(p < 10 ? 1 : 0)}%`;
}

const list = (names: string[]) => (names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`);

/** What a deletion removes, and what it leaves, in words. */
function consequences({ kind, items, all }: Pending): { title: string; text: string; users: string[] } {
  const bytes = items.reduce((n, i) => n + i.bytes + (i.checkpoints?.bytes ?? 0), 0);
  const one = items.length === 1 ? items[0] : null;
  const what = all ? `All ${items.length} ${KIND_LABELS[kind].toLowerCase()}` : `The ${ITEM[kind]} ${one?.name}`;
  const size = formatBytes(bytes);
  const users = [...new Set(items.flatMap((i) => i.usedBy ?? []))];
  const title = all ? `Delete all ${KIND_LABELS[kind].toLowerCase()}?` : `Delete this ${ITEM[kind]}?`;
  switch (kind) {
    case 'runs': {
      const n = items.reduce((s, i) => s + (i.checkpoints?.count ?? 0), 0);
      return {
        title,
        users,
        text: `${what}, ${all ? 'their' : 'its'} metric history and ${n === 1 ? 'its checkpoint' : `${all ? 'their' : 'its'} ${n} checkpoints`} (${size} in all) are removed from this browser.`,
      };
    }
    case 'checkpoints':
      return {
        title,
        users,
        text: all
          ? `${what} (${size}) are removed from this browser. The runs stay, with their metrics, but can no longer be resumed, benched or played from a checkpoint.`
          : `${what} (${one?.detail}, ${size}) is removed from this browser. Its run stays, with its metrics.`,
      };
    case 'datasets':
      return { title, users, text: `${what} (${size}) ${all ? 'are' : 'is'} removed from this browser. Files it was imported from are not touched.` };
    case 'benches':
      return { title, users, text: `${what} and ${all ? 'their' : 'its'} results (${size}) are removed from this browser.` };
    case 'optimizations':
      return {
        title,
        users,
        text: `${what} (${size}) ${all ? 'are' : 'is'} removed from this browser. Template versions saved from ${all ? 'them' : 'it'} stay.`,
      };
    case 'experiments':
      return {
        title,
        users,
        text: `${what} (${size}) ${all ? 'are' : 'is'} removed from this browser: ${all ? 'their' : 'its'} curves, results and the policies to resume from. The world models ${all ? 'they' : 'it'} used stay.`,
      };
    default:
      return {
        title,
        users,
        text: `${what} (${size}) ${all ? 'are' : 'is'} removed from this browser; the app fetches or asks for it again when it needs it.`,
      };
  }
}

function ItemRow({ kind, item, onDelete, busy }: { kind: StoredKind; item: StoredItem; onDelete(): void; busy: boolean }) {
  const ck = item.checkpoints;
  return (
    <tr className="storage-item" data-item={item.id}>
      <td>
        <span className="storage-item-name">{item.name}</span>
        {item.detail ? <span className="muted small"> · {item.detail}</span> : null}
        {ck?.count ? (
          <span className="muted small">
            {' '}
            · with {ck.count === 1 ? '1 checkpoint' : `${ck.count} checkpoints`} ({formatBytes(ck.bytes)})
          </span>
        ) : null}
      </td>
      <td />
      <td className="num">{formatBytes(item.bytes)}</td>
      <td>
        {DELETABLE.includes(kind) ? (
          <button type="button" className="secondary small" disabled={busy} onClick={onDelete} aria-label={`Delete ${ITEM[kind]} ${item.name}`}>
            Delete
          </button>
        ) : null}
      </td>
    </tr>
  );
}

function KindRows({ usage, ask, busy }: { usage: KindUsage; ask(p: Pending): void; busy: boolean }) {
  const [open, setOpen] = useState(false);
  const { kind, count, bytes, items } = usage;
  const label = KIND_LABELS[kind];
  return (
    <>
      <tr data-kind={kind} className="storage-kind">
        <th scope="row">
          {label}
          <div className="muted small">{WHERE[kind]}</div>
        </th>
        <td className="num" data-col="count">
          {count.toLocaleString('en')}
        </td>
        <td className="num" data-col="size">
          {formatBytes(bytes)}
        </td>
        <td>
          <div className="actions">
            {count > 0 ? (
              <button
                type="button"
                className="secondary small"
                aria-expanded={open}
                onClick={() => setOpen(!open)}
                aria-label={`${open ? 'Hide' : 'Show'} ${label.toLowerCase()}`}
              >
                {open ? 'Hide' : 'Show'}
              </button>
            ) : null}
            {count > 0 && DELETABLE.includes(kind) ? (
              <button
                type="button"
                className="secondary small"
                disabled={busy}
                onClick={() => ask({ kind, items, all: true })}
                aria-label={`Delete all ${label.toLowerCase()}`}
              >
                Delete all
              </button>
            ) : null}
          </div>
        </td>
      </tr>
      {open ? items.map((i) => <ItemRow key={i.id} kind={kind} item={i} busy={busy} onDelete={() => ask({ kind, items: [i], all: false })} />) : null}
    </>
  );
}

const COLUMNS: Column[] = ['Kind', { label: 'Items', className: 'num' }, { label: 'Size', className: 'num' }, ACTIONS_COLUMN];

function Usage() {
  const { report, persist } = useStorageStore();
  const e = report?.estimate;
  return (
    <dl className="kv storage-usage">
      <dt>Used</dt>
      <dd data-testid="storage-usage">
        {e && e.quota > 0 ? (
          <>
            <progress value={e.usage} max={e.quota} aria-label="Storage used of the quota" />
            {formatBytes(e.usage)} of {formatBytes(e.quota)} ({percent(e.usage, e.quota)})
          </>
        ) : (
          'the browser gives no estimate'
        )}
      </dd>
      <dt>Persistent</dt>
      <dd>
        {report?.persisted === null || report?.persisted === undefined ? (
          <span className="muted">unknown in this browser</span>
        ) : (
          <>
            <span className={report.persisted ? 'pill ok' : 'pill off'} data-testid="storage-persisted">
              {report.persisted ? 'yes' : 'no'}
            </span>{' '}
            {report.persisted ? (
              <span className="muted small">the browser will not clear it to make room</span>
            ) : (
              <>
                <span className="muted small">the browser may clear it when the disk runs low </span>
                <button type="button" className="secondary small" onClick={() => void persist()}>
                  Keep it
                </button>
              </>
            )}
          </>
        )}
      </dd>
    </dl>
  );
}

export function StorageCard() {
  const { report, status, error, deleting, focus, refresh, remove, focused, dismissError } = useStorageStore();
  const [pending, setPending] = useState<Pending | null>(null);
  const card = useRef<HTMLElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  useEffect(() => {
    if (!focus) return;
    card.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus();
    focused();
  }, [focus, focused]);

  const said = pending ? consequences(pending) : null;
  return (
    <article className="card wide storage" aria-labelledby="storage-title" ref={card}>
      <div className="card-head">
        <h2 id="storage-title" ref={heading} tabIndex={-1}>
          Browser storage
        </h2>
        <button type="button" className="secondary" onClick={() => void refresh()} disabled={status === 'loading'}>
          {status === 'loading' ? 'Measuring…' : 'Measure again'}
        </button>
      </div>
      <p className="muted">
        What the app keeps in this browser. Sizes are the stored data as the browser serialises it; the browser's own total adds its bookkeeping.
      </p>
      {report ? <Usage /> : null}
      <ErrorCallout error={error} onDismiss={dismissError} />
      {report ? (
        <ScrollTable testId="storage-table" caption="What is stored, by kind" columns={COLUMNS}>
          {report.kinds.map((k) => (
            <Fragment key={k.kind}>
              <KindRows usage={k} ask={setPending} busy={deleting !== null} />
            </Fragment>
          ))}
        </ScrollTable>
      ) : status === 'loading' ? (
        <p className="loading">Measuring browser storage…</p>
      ) : null}
      <ConfirmDialog
        open={pending !== null}
        title={said?.title ?? ''}
        confirmLabel={pending?.all ? 'Delete all' : `Delete ${pending ? ITEM[pending.kind] : ''}`}
        onCancel={() => setPending(null)}
        onConfirm={() => {
          const p = pending;
          setPending(null);
          if (p) void remove(p.kind, p.all ? 'all' : p.items.map((i) => i.id));
        }}
      >
        <p>{said?.text}</p>
        {said?.users.length ? (
          <p>Kept, though they used it: {list(said.users)}. Their records, results and checkpoints stay; an unfinished one cannot resume without the data.</p>
        ) : null}
      </ConfirmDialog>
    </article>
  );
}
