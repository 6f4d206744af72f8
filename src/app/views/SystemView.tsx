// System: what GPU the app runs on, what it allows, what the app holds on it, and whether our
// kernels compute correctly here (the self-test); and what the app stores in this browser
// (system/StorageCard.tsx). The GPU figures are the jobs worker's device, as the worker reports
// it (stores/gpu.ts): the page opens no device of its own.
import { useEffect, type ReactNode } from 'react';
import type { AdapterReport } from '../../jobs/protocol.ts';
import { TableHead } from '../components/Table.tsx';
import { useGpuStore, type SelfTestState } from '../stores/gpu.ts';
import { StorageCard } from './system/StorageCard.tsx';

const KIB = 1024;
/** How often the page asks the worker for its GPU memory figures: they move with each training step. */
const STATS_POLL_MS = 1000;

function formatBytes(n: number): string {
  if (n < KIB) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / KIB;
  let i = 0;
  while (v >= KIB && i < units.length - 1) {
    v /= KIB;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

function Yes({ on }: { on: boolean }) {
  return <span className={on ? 'pill ok' : 'pill off'}>{on ? 'yes' : 'no'}</span>;
}

/** A labelled value in a card's key-value list. */
function Item({ label, children }: { label: ReactNode; children: ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

function AdapterCard({ report }: { report: AdapterReport }) {
  return (
    <article className="card" aria-labelledby="adapter-title">
      <h2 id="adapter-title">Adapter</h2>
      <dl className="kv" data-testid="adapter">
        <dt>Vendor</dt>
        <dd data-testid="adapter-vendor">{report.vendor}</dd>
        <dt>Architecture</dt>
        <dd data-testid="adapter-architecture">{report.architecture}</dd>
        {report.device ? <Item label="Device">{report.device}</Item> : null}
        {report.description ? <Item label="Description">{report.description}</Item> : null}
        <Item label="Fallback adapter">
          <Yes on={report.isFallbackAdapter} />
          {report.isFallbackAdapter ? <span className="muted"> a software (CPU) implementation: expect slow training</span> : null}
        </Item>
      </dl>
    </article>
  );
}

const FEATURES: [name: string, key: keyof AdapterReport['features']][] = [
  ['shader-f16', 'shaderF16'],
  ['subgroups', 'subgroups'],
  ['timestamp-query', 'timestampQuery'],
];

function FeaturesCard({ report }: { report: AdapterReport }) {
  return (
    <article className="card" aria-labelledby="features-title">
      <h2 id="features-title">Features</h2>
      <dl className="kv">
        {FEATURES.map(([name, key]) => (
          <Item key={name} label={<code>{name}</code>}>
            <Yes on={report.features[key]} />
          </Item>
        ))}
      </dl>
    </article>
  );
}

function LimitsCard({ limits }: { limits: AdapterReport['limits'] }) {
  return (
    <article className="card" aria-labelledby="limits-title">
      <h2 id="limits-title">Limits for training</h2>
      <dl className="kv">
        <Item label="Storage buffer binding">{formatBytes(limits.maxStorageBufferBindingSize)}</Item>
        <Item label="Buffer size">{formatBytes(limits.maxBufferSize)}</Item>
        <Item label="Workgroup storage">{formatBytes(limits.maxComputeWorkgroupStorageSize)}</Item>
        <Item label="Invocations per workgroup">{limits.maxComputeInvocationsPerWorkgroup}</Item>
        <Item label="Storage buffers per stage">{limits.maxStorageBuffersPerShaderStage}</Item>
        <Item label="Workgroups per dimension">{limits.maxComputeWorkgroupsPerDimension}</Item>
      </dl>
    </article>
  );
}

function MemoryCard() {
  const { stats, simulateLoss } = useGpuStore();
  return (
    <article className="card" aria-labelledby="memory-title">
      <h2 id="memory-title">GPU memory held by the app</h2>
      <dl className="kv" data-testid="memory">
        <Item label="In use">{stats ? formatBytes(stats.bytes) : '—'}</Item>
        <Item label="Live buffers">{stats?.live ?? '—'}</Item>
        <Item label="Peak">{stats ? formatBytes(stats.peakBytes) : '—'}</Item>
      </dl>
      <details className="advanced">
        <summary>Recovery</summary>
        <p className="muted">Destroy the device to check that the app notices and can re-create it.</p>
        <button type="button" className="secondary" onClick={simulateLoss}>
          Simulate device loss
        </button>
      </details>
    </article>
  );
}

function SelfTestSummary({ selfTest }: { selfTest: SelfTestState }) {
  const passed = selfTest.results.filter((r) => r.pass).length;
  const total = selfTest.results.length;
  if (selfTest.error) {
    return (
      <p data-testid="selftest-summary" className="summary bad">
        The self-test could not finish: {selfTest.error}
      </p>
    );
  }
  return (
    <p role="status" data-testid="selftest-summary" className={passed === total ? 'summary ok' : 'summary bad'}>
      {passed === total ? `Self-test passed: ${passed} of ${total} checks` : `Self-test failed: ${total - passed} of ${total} checks failed`}
    </p>
  );
}

function SelfTestCard() {
  const { selfTest, runSelfTest } = useGpuStore();
  const done = !selfTest.running && selfTest.finishedAt !== null;
  return (
    <article className="card wide" aria-labelledby="selftest-title">
      <div className="card-head">
        <h2 id="selftest-title">Kernel self-test</h2>
        <button type="button" onClick={() => void runSelfTest()} disabled={selfTest.running}>
          {selfTest.running ? 'Running…' : 'Run self-test'}
        </button>
      </div>
      <p className="muted">Runs our WGSL kernels on this GPU, in the worker that trains, and compares each with its plain-TypeScript reference.</p>
      {selfTest.results.length > 0 ? (
        <table className="table" data-testid="selftest-table">
          <TableHead columns={['Check', 'Result', 'Detail', 'Time']} />
          <tbody>
            {selfTest.results.map((r) => (
              <tr key={r.name}>
                <td>{r.name}</td>
                <td>
                  <span className={r.pass ? 'pill ok' : 'pill bad'}>{r.pass ? 'pass' : 'FAIL'}</span>
                </td>
                <td>{r.detail}</td>
                <td>{r.ms.toFixed(0)} ms</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {done ? <SelfTestSummary selfTest={selfTest} /> : null}
    </article>
  );
}

/** Why there is no device (no WebGPU, or the device was lost), and the button that tries again. */
function DeviceProblem({ lost }: { lost: boolean }) {
  const { error, help, recreate } = useGpuStore();
  return (
    <div className="callout error" role="alert">
      <h2>{lost ? 'The GPU device was lost' : 'WebGPU is not available'}</h2>
      <p>{error}</p>
      {!lost && help ? <pre className="help">{help}</pre> : null}
      <button type="button" onClick={() => void recreate()}>
        {lost ? 'Re-create device' : 'Try again'}
      </button>
    </div>
  );
}

export default function SystemView() {
  const { status, report, acquire, refreshStats } = useGpuStore();

  useEffect(() => {
    void acquire();
  }, [acquire]);

  useEffect(() => {
    const id = setInterval(refreshStats, STATS_POLL_MS);
    return () => clearInterval(id);
  }, [refreshStats]);

  return (
    <section className="view" aria-labelledby="system-title">
      <h1 id="system-title">System</h1>

      {status === 'acquiring' || status === 'idle' ? <p className="loading">Looking for a WebGPU adapter…</p> : null}
      {status === 'unavailable' || status === 'lost' ? <DeviceProblem lost={status === 'lost'} /> : null}

      {report && status === 'ready' ? (
        <>
          <div className="cards">
            <AdapterCard report={report} />
            <FeaturesCard report={report} />
            <LimitsCard limits={report.limits} />
            <MemoryCard />
          </div>
          <SelfTestCard />
        </>
      ) : null}

      {/* Storage needs no GPU: it is shown whatever the device's state. */}
      <StorageCard />
    </section>
  );
}
