// `lwm export` of a full fine-tune of a Hugging Face model (its checkpoint carries the base's
// files): a folder of the base's architecture whose weights read back as ours; and the CLI's
// refusals for the LoRA options.
import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureIO } from '../testing.ts';
import { UsageError } from '../io.ts';
import { saveCheckpoint } from '../../core/model/checkpoint.ts';
import { baseToJson, readHfBase } from '../../model/hf/base.ts';
import { configFromHf } from '../../model/hf/config.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { loadOnnxModel } from '../../model/onnx/load.ts';
import { paramsFromHf } from '../../model/hf/weights.ts';
import { readSafetensors, tensorToF32 } from '../../core/model/safetensors.ts';
import exportCommand from './export.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const LIMITS = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27, memoryBudget: 2 ** 30, shaderF16: false };

describe('lwm export of a fine-tuned Hugging Face model', () => {
  it("writes the base's architecture with our weights under the standard names", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-export-hf-'));
    try {
      const { base, params } = await readHfBase(await nodeFolder(FOLDER), { limits: LIMITS }, 'llama-chat');
      const config = configFromHf(JSON.parse(base.files['config.json'])).config;
      // Padding between tensors (zero) stays zero: it is not exported.
      const tuned = params.map((v, i) => (v === 0 ? 0 : v + (i % 5) * 1e-3));
      const ckPath = join(dir, 'ft.safetensors');
      await writeFile(ckPath, saveCheckpoint({ config, params: tuned, step: 3, extraMetadata: { stage: 'sft', hf_base: baseToJson(base) } }));
      const out = join(dir, 'out');
      const io = captureIO();
      expect(await exportCommand([ckPath, '--to', 'hf', '-o', out], io), io.stderr).toBe(0);
      expect((await readdir(out)).sort()).toEqual(['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
      const cfg = JSON.parse(await readFile(join(out, 'config.json'), 'utf8'));
      expect(cfg.architectures).toEqual(['LlamaForCausalLM']);
      expect(cfg.torch_dtype ?? cfg.dtype).toBe('float32');
      expect(await readFile(join(out, 'tokenizer.json'), 'utf8')).toBe(base.files['tokenizer.json']);
      const file = readSafetensors(new Uint8Array(await readFile(join(out, 'model.safetensors'))));
      const tensors = new Map(file.tensors.map((t) => [t.name, { shape: t.shape, data: tensorToF32(t) }]));
      expect(Array.from(paramsFromHf(config, tensors))).toEqual(Array.from(tuned));
      await expect(exportCommand([ckPath, '--to', 'hf', '--unmerged', '-o', join(dir, 'x')], captureIO())).rejects.toThrow(UsageError);
      // --to onnx keeps the same files beside the model: the base's chat template, which the run trained with, included.
      const onnxDir = join(dir, 'onnx-out');
      const io2 = captureIO();
      expect(await exportCommand([ckPath, '--to', 'onnx', '-o', onnxDir], io2), io2.stderr).toBe(0);
      expect((await readdir(onnxDir)).sort()).toEqual(['config.json', 'generation_config.json', 'onnx', 'tokenizer.json', 'tokenizer_config.json']);
      for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json'])
        expect(await readFile(join(onnxDir, f), 'utf8')).toBe(await readFile(join(out, f), 'utf8'));
      expect(JSON.parse(base.files['tokenizer_config.json']).chat_template).toEqual(expect.any(String));
      const m = await loadOnnxModel(await nodeFolder(onnxDir), { executionProvider: 'wasm' });
      expect(m.hasChatTemplate).toBe(true);
      m.decoder.dispose();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a PEFT adapter folder --to onnx: merged into its base, and onnxruntime gives PEFT's logits", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-export-adapter-'));
    try {
      const expected = JSON.parse(await readFile(fileURLToPath(new URL('../../model/fixtures/lora/expected.json', import.meta.url)), 'utf8')) as {
        input_ids: number[];
        columns: number;
        peft: { peft_logits: number[][] };
      };
      const io = captureIO();
      const out = join(dir, 'onnx');
      // The adapter names its base as a path from the repository root (where PEFT wrote it).
      expect(await exportCommand([fileURLToPath(new URL('../../model/fixtures/lora/peft', import.meta.url)), '--to', 'onnx', '-o', out], io), io.stderr).toBe(
        0,
      );
      expect((await readdir(out)).sort()).toEqual(['config.json', 'generation_config.json', 'onnx', 'tokenizer.json', 'tokenizer_config.json']);
      const worstAgainstPeft = async (folder: string) => {
        const m = await loadOnnxModel(await nodeFolder(folder), { executionProvider: 'wasm' });
        try {
          expect(m.hasChatTemplate).toBe(true);
          const { logits } = await m.decoder.forward(expected.input_ids);
          const V = logits.length / expected.input_ids.length;
          let worst = 0;
          expected.peft.peft_logits.forEach((row, t) => row.forEach((want, c) => (worst = Math.max(worst, Math.abs(logits[t * V + c] - want)))));
          return worst;
        } finally {
          m.decoder.dispose();
        }
      };
      expect(await worstAgainstPeft(out)).toBeLessThan(1e-3);
      // The base alone is far from them: the adapter was merged.
      const baseOut = join(dir, 'base-onnx');
      expect(await exportCommand([FOLDER, '--to', 'onnx', '-o', baseOut], captureIO())).toBe(0);
      expect(await worstAgainstPeft(baseOut)).toBeGreaterThan(1e-2);
      await expect(
        exportCommand(
          [fileURLToPath(new URL('../../model/fixtures/lora/peft', import.meta.url)), '--to', 'onnx', '--unmerged', '-o', join(dir, 'x')],
          captureIO(),
        ),
      ).rejects.toThrow(/--unmerged is for --to hf/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
