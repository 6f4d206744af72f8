// On the GPU: a full fine-tune's checkpoint of the tiny chat Llama, opened by the checkpoint
// backend (`lwm infer --backend local`, the Playground, the Bench), and its `lwm export --to hf`
// folder, opened by the Hugging Face backend, generate from the prompt of the trained layout
// (exportServed.test.ts shows those ids are the SFT pipeline's): the same text from both, and it
// is the greedy continuation of exactly those ids.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateText, type TurnRequest } from '../../core/backend.ts';
import { generateTrajectories } from '../../envs/generate.ts';
import { expandTurns } from '../../core/turns/index.ts';
import { gpuRuntime } from '../../gpu/testing/runtime.ts';
import { saveCheckpoint } from '../../core/model/checkpoint.ts';
import { readHfBase } from '../../model/hf/base.ts';
import { loadHfModel } from '../../model/hf/load.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { hfCheckpointMetadata, prepare, resolveSpec, type TrainSpec } from '../../train/pipeline.ts';
import { openCheckpointBackend } from '../../backends/checkpoint.ts';
import { hfServedPrompt, openHfBackend } from '../../backends/hf.ts';
import { captureIO } from '../testing.ts';
import exportCommand from './export.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const LIMITS = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30, shaderF16: false };

describe('a fine-tune of a Hugging Face model on the GPU', () => {
  it('the checkpoint backend and the Hugging Face backend on its export generate from the trained prompt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-served-gpu-'));
    const rt = await gpuRuntime();
    try {
      const { base, params } = await readHfBase(await nodeFolder(FOLDER), { limits: LIMITS }, 'llama-chat');
      const trajectories = generateTrajectories('terminal', 2, 3);
      const spec = resolveSpec({ kind: 'train', stage: 'sft', preset: 'micro', steps: 1, templates: { compact: 1 }, evalFraction: 0 } as TrainSpec);
      const p = prepare(spec, trajectories, undefined, { base, params });
      p.hf!.templates = spec.templateSet;
      const ckPath = join(dir, 'ft.safetensors');
      const bytes = saveCheckpoint({
        config: p.config,
        params,
        step: 1,
        extraMetadata: hfCheckpointMetadata(p as typeof p & { hf: NonNullable<typeof p.hf> }, spec),
      });
      await writeFile(ckPath, bytes);
      const out = join(dir, 'hf');
      const io = captureIO();
      expect(await exportCommand([ckPath, '--to', 'hf', '-o', out], io), io.stderr).toBe(0);

      const s = expandTurns(trajectories)[1];
      const request: TurnRequest = { sample: { domain: s.domain, systemPrompt: s.systemPrompt, history: s.history, action: s.action } };
      const o = { maxTokens: 6, temperature: 0 };
      const open = openCheckpointBackend(rt, bytes, { source: ckPath });
      const model = await loadHfModel(await nodeFolder(out), { limits: LIMITS });
      const hf = openHfBackend(rt, model, { context: p.config.contextLength });
      try {
        expect(open.template.version).toBe('compact');
        const ids = open.trained!.prompt(request, p.config.contextLength - o.maxTokens).fitted.ids;
        expect(hfServedPrompt(model, request, p.config.contextLength - o.maxTokens).ids).toEqual(ids);
        const greedy: number[] = [];
        for await (const id of hf.generateIds(ids, o)) greedy.push(id);
        const want = model
          .tokenizer!.decode(
            greedy.filter((id) => !model.stopIds.includes(id)),
            { skipSpecialTokens: true },
          )
          .split('</predicted_observation>')[0];
        const fromCheckpoint = await generateText(open.backend, request, o);
        expect(fromCheckpoint).toBe(want);
        expect(await generateText(hf.backend, request, o)).toBe(want);
      } finally {
        open.dispose();
        hf.dispose();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
