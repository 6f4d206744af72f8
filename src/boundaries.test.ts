// The import-boundary rules (.dependency-cruiser.cjs) catch wrong imports: dependency-cruiser,
// run the way `npm test` runs it, on a small fixture tree with one import per module, some
// allowed, some crossing a door. Each module must break exactly the rules listed for it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..');

/** [module, its one import, the rules it breaks]. Import targets are created as empty modules. */
const CASES: [string, string, string[]][] = [
  // wrong doors
  ['src/core/bench/runner.ts', "import type { LwmBackend } from '../../backends/types.ts';", ['core-imports-only-core']],
  ['src/core/model/plan.ts', "import type { NormKind } from '../../reference/norm.ts';", ['core-imports-only-core']],
  ['src/storage/db.ts', "import type { TrainSpec } from '../train/pipeline.ts';", ['storage-keeps-data']],
  ['src/storage/weights.ts', "import { GpuModel } from '../model/gpt.ts';", ['storage-keeps-data']],
  ['src/envs/terminal/env.ts', "import { GpuModel } from '../../model/gpt.ts';", ['envs-beside-core']],
  ['src/core/playground/context.ts', "import { ENV_DOMAINS } from '../../envs/registry.ts';", ['core-imports-only-core']],
  ['src/app/stores/trainForm.ts', "import { DEFAULT_FORM } from '../views/train/form.ts';", ['app-stores-below-views']],
  ['src/app/components/monaco/setup.ts', "import type { P } from '../../views/prompts/placeholders.ts';", ['app-components-below-views']],
  ['src/app/lib/download.ts', "import { useTrainStore } from '../stores/train.ts';", ['app-lib-below-stores']],
  ['src/app/stores/gpu.ts', "import { GpuRuntime } from '../../gpu/runtime.ts';", ['app-never-touches-the-gpu']],
  ['src/app/views/Playground.tsx', "import { GpuGenerator } from '../../model/generate.ts';", ['app-never-touches-the-gpu']],
  ['src/gpu/kernels/matmul.ts', "import type { BlockPlan } from '../../model/block.ts';", ['gpu-below-model']],
  ['src/model/gpt.ts', "import { makeBatch } from '../train/data.ts';", ['model-below-train']],
  ['src/train/stages/sft.ts', "import { JobHost } from '../../jobs/host.ts';", ['train-below-jobs']],
  // a rejection-sampling teacher or an endpoint reward judge: train may use a backend
  ['src/train/rejection.ts', "import { endpointBackend } from '../backends/endpoint.ts';", []],
  ['src/backends/local.ts', "import type { TrainStage } from '../train/pipeline.ts';", ['backends-beside-train']],
  ['src/hub/download.ts', "import { loadHfModel } from '../model/hf/load.ts';", ['hub-beside-core']],
  ['src/hub/node.ts', "import { BackendError } from '../backends/errors.ts';", ['hub-beside-core']],
  ['src/reference/matmul.ts', "import { matmul } from '../gpu/kernels/matmul.ts';", ['reference-imports-core']],
  ['src/lib/judge.ts', "import { runTraining } from '../train/pipeline.ts';", ['lib-is-the-package-api']],
  ['src/cli/commands/agree.ts', "import { judgeTurn } from '../../lib/judge.ts';", ['nothing-imports-the-package']],
  ['src/lib/model.ts', "import { openBackend } from '../backends/open.ts';", []],
  ['src/serve/openai.ts', "import { runTraining } from '../train/pipeline.ts';", ['serve-below-cli']],
  ['src/serve/envs.ts', "import { ENV_DOMAINS } from '../envs/registry.ts';", []],
  ['src/jobs/jobs.ts', "import { main } from '../cli/main.ts';", ['nothing-imports-cli', 'jobs-below-app']],
  ['src/core/judge/verifier.test.ts', "import { useGpuStore } from '../../app/stores/gpu.ts';", ['nothing-imports-app']],
  // a cycle is reported once, at the module where the cruise closes it
  ['src/core/turns/split.ts', "import { mix } from './rng.ts';", []],
  ['src/core/turns/rng.ts', "import { split } from './split.ts';", ['no-circular']],
  ['src/envs/view.ts', "import { useState } from 'react';", ['no-react-below-app']],
  ['src/core/schema/store.ts', "import { openDB } from 'idb';", ['core-needs-no-browser-or-gpu']],
  // doors that are open
  ['src/app/views/train/form.ts', "import { PRESETS } from '../../../core/model/config.ts';", []],
  ['src/app/views/TrainView.tsx', "import { useTrainStore } from '../stores/train.ts';", []],
  ['src/app/stores/train.ts', "import { JobClient } from '../../jobs/client.ts';", []],
  ['src/app/stores/datasets.ts', "import { saveFile } from '../lib/download.ts';", []],
  ['src/train/pipeline.ts', "import { GpuModel } from '../model/gpt.ts';", []],
  ['src/train/recipe.ts', "import { generateTrajectories } from '../envs/generate.ts';", []],
  ['src/train/stages/common.ts', "import type { JobContext } from '../context.ts';", []],
  ['src/jobs/client.ts', "import { runTraining } from '../train/pipeline.ts';", []],
  ['src/model/generate.ts', "import { matmul } from '../gpu/kernels/matmul.ts';", []],
  ['src/gpu/selftest.ts', "import { matmulRef } from '../reference/matmul.ts';", []],
  ['src/reference/gpt.ts', "import type { ModelConfig } from '../core/model/config.ts';", []],
  ['src/storage/runs.ts', "import type { RunRecord } from '../core/records.ts';", []],
  ['src/envs/registry.ts', "import { mulberry32 } from '../core/random.ts';", []],
  ['src/backends/endpoint.ts', "import type { LwmBackend } from '../core/backend.ts';", []],
  ['src/backends/node.ts', "import { resolveHubPath } from '../hub/node.ts';", []],
  ['src/cli/commands/train.ts', "import { runTraining } from '../../train/pipeline.ts';", []],
  ['src/core/formats/index.ts', "import { validate } from '../schema/validate.ts';", []],
  // a test may wire layers together
  ['src/backends/local.gpu.test.ts', "import { runTraining } from '../train/pipeline.ts';", []],
  ['src/core/bench/bench.test.ts', "import { generateText } from '../../backends/types.ts';", []],
];

const root = mkdtempSync(join(tmpdir(), 'lwm-boundaries-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(path: string, text: string) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** The module path an import line names, relative to the fixture root ('' for a package). */
function target(from: string, line: string): string {
  const spec = /from '([^']+)'/.exec(line)![1];
  return spec.startsWith('.') ? join(dirname(from), spec) : '';
}

function cruise(): { from: string; to: string; rule: { name: string } }[] {
  for (const [from, line] of CASES) {
    const to = target(from, line);
    if (to && !CASES.some(([f]) => f === to)) write(to, 'export {};\n');
  }
  for (const [from, line] of CASES) write(from, `${line}\nexport {};\n`);
  write(
    'tsconfig.json',
    JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'bundler', allowImportingTsExtensions: true, noEmit: true, jsx: 'react-jsx' } }),
  );
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
  const r = spawnSync(join(repo, 'node_modules/.bin/depcruise'), ['src', '--config', join(repo, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (!r.stdout) throw new Error(`depcruise printed nothing: ${r.stderr}`);
  return JSON.parse(r.stdout).summary.violations;
}

describe('import boundaries (.dependency-cruiser.cjs)', () => {
  const violations = cruise();

  it.each(CASES)('%s: %s', (from, _line, rules) => {
    const broken = violations.filter((v) => v.from === from).map((v) => v.rule.name);
    expect(broken.sort()).toEqual([...rules].sort());
  });

  it('every rule of the config is shown catching a wrong import', async () => {
    const config = (await import(join(repo, '.dependency-cruiser.cjs'))).default as { forbidden: { name: string }[] };
    const shown = new Set(CASES.flatMap(([, , rules]) => rules));
    expect(config.forbidden.map((r) => r.name).filter((n) => !shown.has(n))).toEqual([]);
  });
});
