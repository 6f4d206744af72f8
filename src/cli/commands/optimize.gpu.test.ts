// `lwm optimize --backend local`: a micro checkpoint (random weights, its tokenizer and training
// spec in the metadata) as the simulator on the GPU, prompted with each candidate template, the
// local judge and the offline optimizer: 2 rounds, the same files twice (greedy decoding); the
// app's optimization job builds the same requests for a checkpoint as this command does.
import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import optimize from './optimize.ts';
import { openInferBackend, parseInferArgs, type InferArgs } from './infer.ts';
import { benchSampleRecords } from '../../core/bench/evalTurns.ts';
import { sampleFromRecord } from '../../core/bench/runner.ts';
import { templateRender } from '../../core/optimize/evaluate.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/builtin.ts';
import { optimizationRender } from '../../jobs/optimize.ts';
import { captureIO, microCheckpoint } from '../testing.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import type { LoopState } from '../../core/optimize/loop.ts';

describe('lwm optimize --backend local', () => {
  it('runs 2 offline rounds with a micro checkpoint and the local judge, deterministically', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-optimize-gpu-'));
    try {
      const data = generateTrajectories('terminal', 4, 0);
      const ckpt = join(dir, 'micro.safetensors');
      await writeFile(ckpt, microCheckpoint(data, { template: 'v0' }));
      const run = async (out: string) => {
        const io = captureIO();
        const code = await optimize(
          [
            '--template',
            'v1',
            '--domain',
            'terminal',
            '--n',
            '4',
            '--dev',
            '3',
            '--test',
            '2',
            '--backend',
            'local',
            '--model',
            ckpt,
            '--max-tokens',
            '4',
            '--rounds',
            '2',
            '--candidates',
            '2',
            '-o',
            join(dir, out),
          ],
          io,
        );
        expect(io.stderr).toMatch(/round 2\/2 r2c\d on dev: 3\/3/);
        expect(code).toBe(0);
        return JSON.parse(await readFile(join(dir, out, 'state.json'), 'utf8')) as LoopState;
      };
      const a = await run('a');
      expect(a.stopped).toBe('done');
      expect(a.versions[0].text).toContain('You simulate a {{ domain }} environment');
      expect(a.versions.filter((v) => v.round > 0).length).toBeGreaterThan(0);
      expect(a.calls.model).toBe(3 * (1 + a.versions.filter((v) => v.round > 0 && v.status !== 'invalid').length) + 2);
      const b = await run('b');
      expect(b).toEqual(a);
      // The app's optimization job sends a checkpoint the same requests as --backend local.
      const opened = (await openInferBackend(parseInferArgs(['-', '--backend', 'local', '--model', ckpt]) as InferArgs, 1, captureIO(), 'lwm optimize'))!;
      opened.dispose();
      expect(opened.form).toBe('turn');
      const app = optimizationRender(
        { start: { version: 'v1', template: BUILTIN_TEMPLATES.v1 }, backend: { id: 'c', name: 'c', kind: 'checkpoint', checkpoint: { key: ckpt } } },
        opened,
      );
      const samples = benchSampleRecords(data, { evalFraction: 1, seed: 0 }).map(sampleFromRecord);
      for (const v of a.versions) for (const s of samples) expect(app(v.text, s)).toEqual(templateRender(opened.form)(v.text, s));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
