// System: what GPU the app runs on, what it allows, what the app holds on it, and whether our
// kernels compute correctly here (the self-test). All of it is the jobs worker's device, as the
// worker reports it (stores/gpu.ts): the page opens no device of its own.
import { useEffect } from 'react';
import { useGpuStore } from '../stores/gpu.ts';

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

function Yes({ on }: { on: boolean }) {
  return <span className={on ? 'pill ok' : 'pill off'}>{on ? 'yes' : 'no'}</span>;
}

export default function SystemView() {
  const { status, report, error, help, stats, selfTest, acquire, recreate, refreshStats, runSelfTest, simulateLoss } = useGpuStore();

  useEffect(() => {
    void acquire();
  }, [acquire]);

  useEffect(() => {
    const id = setInterval(refreshStats, 1000);
    return () => clearInterval(id);
  }, [refreshStats]);

  const passed = selfTest.results.filter((r) => r.pass).length;
  const done = !selfTest.running && selfTest.finishedAt !== null;

  return (
    <section className="view" aria-labelledby="system-title">
      <h1 id="system-title">System</h1>

      {status === 'acquiring' || status === 'idle' ? <p className="loading">Looking for a WebGPU adapter…</p> : null}

      {status === 'unavailable' ? (
        <div className="callout error" role="alert">
          <h2>WebGPU is not available</h2>
          <p>{error}</p>
          {help ? <pre className="help">{help}</pre> : null}
          <button type="button" onClick={() => void recreate()}>
            Try again
          </button>
        </div>
      ) : null}

      {status === 'lost' ? (
        <div className="callout error" role="alert">
          <h2>The GPU device was lost</h2>
          <p>{error}</p>
          <button type="button" onClick={() => void recreate()}>
            Re-create device
          </button>
        </div>
      ) : null}

      {report && status === 'ready' ? (
        <>
          <div className="cards">
            <article className="card" aria-labelledby="adapter-title">
              <h2 id="adapter-title">Adapter</h2>
              <dl className="kv" data-testid="adapter">
                <dt>Vendor</dt>
                <dd data-testid="adapter-vendor">{report.vendor}</dd>
                <dt>Architecture</dt>
                <dd data-testid="adapter-architecture">{report.architecture}</dd>
                {report.device ? (
                  <>
                    <dt>Device</dt>
                    <dd>{report.device}</dd>
                  </>
                ) : null}
                {report.description ? (
                  <>
                    <dt>Description</dt>
                    <dd>{report.description}</dd>
                  </>
                ) : null}
                <dt>Fallback adapter</dt>
                <dd>
                  <Yes on={report.isFallbackAdapter} />
                  {report.isFallbackAdapter ? <span className="muted"> a software (CPU) implementation: expect slow training</span> : null}
                </dd>
              </dl>
            </article>

            <article className="card" aria-labelledby="features-title">
              <h2 id="features-title">Features</h2>
              <dl className="kv">
                <dt>
                  <code>shader-f16</code>
                </dt>
                <dd>
                  <Yes on={report.features.shaderF16} />
                </dd>
                <dt>
                  <code>subgroups</code>
                </dt>
                <dd>
                  <Yes on={report.features.subgroups} />
                </dd>
                <dt>
                  <code>timestamp-query</code>
                </dt>
                <dd>
                  <Yes on={report.features.timestampQuery} />
                </dd>
              </dl>
            </article>

            <article className="card" aria-labelledby="limits-title">
              <h2 id="limits-title">Limits for training</h2>
              <dl className="kv">
                <dt>Storage buffer binding</dt>
                <dd>{formatBytes(report.limits.maxStorageBufferBindingSize)}</dd>
                <dt>Buffer size</dt>
                <dd>{formatBytes(report.limits.maxBufferSize)}</dd>
                <dt>Workgroup storage</dt>
                <dd>{formatBytes(report.limits.maxComputeWorkgroupStorageSize)}</dd>
                <dt>Invocations per workgroup</dt>
                <dd>{report.limits.maxComputeInvocationsPerWorkgroup}</dd>
                <dt>Storage buffers per stage</dt>
                <dd>{report.limits.maxStorageBuffersPerShaderStage}</dd>
                <dt>Workgroups per dimension</dt>
                <dd>{report.limits.maxComputeWorkgroupsPerDimension}</dd>
              </dl>
            </article>

            <article className="card" aria-labelledby="memory-title">
              <h2 id="memory-title">GPU memory held by the app</h2>
              <dl className="kv" data-testid="memory">
                <dt>In use</dt>
                <dd>{stats ? formatBytes(stats.bytes) : '—'}</dd>
                <dt>Live buffers</dt>
                <dd>{stats?.live ?? '—'}</dd>
                <dt>Peak</dt>
                <dd>{stats ? formatBytes(stats.peakBytes) : '—'}</dd>
              </dl>
              <details className="advanced">
                <summary>Recovery</summary>
                <p className="muted">Destroy the device to check that the app notices and can re-create it.</p>
                <button type="button" className="secondary" onClick={simulateLoss}>
                  Simulate device loss
                </button>
              </details>
            </article>
          </div>

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
                <thead>
                  <tr>
                    <th scope="col">Check</th>
                    <th scope="col">Result</th>
                    <th scope="col">Detail</th>
                    <th scope="col">Time</th>
                  </tr>
                </thead>
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
            {done && selfTest.error ? (
              <p data-testid="selftest-summary" className="summary bad">
                The self-test could not finish: {selfTest.error}
              </p>
            ) : done ? (
              <p role="status" data-testid="selftest-summary" className={passed === selfTest.results.length ? 'summary ok' : 'summary bad'}>
                {passed === selfTest.results.length ? `Self-test passed: ${passed} of ${selfTest.results.length} checks` : `Self-test failed: ${selfTest.results.length - passed} of ${selfTest.results.length} checks failed`}
              </p>
            ) : null}
          </article>
        </>
      ) : null}
    </section>
  );
}
