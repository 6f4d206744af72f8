// The app's optimization job (src/jobs/optimize.ts) and `lwm optimize` send a simulator the same
// request for the same template text and sample: the CLI's form is what `lwm infer`'s openInferBackend
// chooses for its --backend, the app's what the job renders with for the same kind of backend.
import { describe, expect, it } from 'vitest';
import { benchSampleRecords } from '../../core/bench/evalTurns.ts';
import { sampleFromRecord } from '../../core/bench/runner.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { templateRender } from '../../core/optimize/evaluate.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/builtin.ts';
import type { BenchBackendRef, OptimizationRecord } from '../../core/records.ts';
import { openBenchBackend } from '../../jobs/bench.ts';
import { optimizationRender } from '../../jobs/optimize.ts';
import { captureIO } from '../testing.ts';
import { openInferBackend, parseInferArgs, type InferArgs } from './infer.ts';

const samples = benchSampleRecords([...generateTrajectories('terminal', 6, 0), ...generateTrajectories('mcp', 6, 0)], { evalFraction: 1, seed: 0 }).map(
  sampleFromRecord,
);
const text = BUILTIN_TEMPLATES.v2.text.replace('{{ action }}', 'Never invent files.\n{{ action }}');

/** The app's side: the optimization job opens the backend (src/backends/open.ts), which decides the request form. */
async function app(backend: BenchBackendRef) {
  const opened = await openBenchBackend(backend, { generation: {} }, { gpu: () => Promise.reject(new Error('no GPU in this test')) }, undefined);
  opened.dispose();
  return optimizationRender({ start: { version: 'v2', template: BUILTIN_TEMPLATES.v2 }, backend } as Pick<OptimizationRecord, 'start' | 'backend'>, opened);
}

async function cli(argv: string[]) {
  const opened = await openInferBackend(parseInferArgs(['-', ...argv]) as InferArgs, 1, captureIO(), 'lwm optimize');
  if (!opened) throw new Error('the backend did not open');
  opened.dispose();
  return templateRender(opened.form);
}

describe('the app and lwm optimize build identical requests', () => {
  it.each([
    [
      'endpoint',
      ['--backend', 'endpoint', '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm'],
      { id: 'e', name: 'e', kind: 'endpoint', endpoint: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    ],
    ['copy-last', ['--backend', 'copy-last'], { id: 'c', name: 'c', kind: 'copy-last' }],
    ['reference', ['--backend', 'reference'], { id: 'r', name: 'r', kind: 'reference' }],
  ] as const)('%s: the same request for every sample', async (_name, argv, backend) => {
    const c = await cli([...argv]);
    const a = await app(backend as BenchBackendRef);
    expect(samples.length).toBeGreaterThan(10);
    for (const s of samples) expect(a(text, s)).toEqual(c(text, s));
  });
});
