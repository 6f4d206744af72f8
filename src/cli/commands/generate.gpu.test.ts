// `lwm generate` on the GPU: on the tiny Llama folder with a trained tokenizer
// (src/model/fixtures/hf/llama-chat) it prints exactly transformers' prompt ids and greedy
// generate() ids for --prompt and --chat (scripts/fixtures/hf_tiny_models.py recorded them); on a
// micro checkpoint of ours it generates with the checkpoint's own tokenizer. The whole command
// (bin/lwm.mjs) run from an environment without the Vulkan variables, as a user's shell has it,
// generates the same ids; without an adapter it says what to install.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import generate from './generate.ts';
import { captureIO } from '../testing.ts';
import { FileError } from '../io.ts';
import { trainBpe } from '../../core/tokenizer/index.ts';
import { presetConfig } from '../../core/model/config.ts';
import { initParams } from '../../model/init.ts';
import { saveCheckpoint } from '../../core/model/checkpoint.ts';

const FOLDER = fileURLToPath(new URL('../../model/fixtures/hf/llama-chat', import.meta.url));
const BIN = fileURLToPath(new URL('../../../bin/lwm.mjs', import.meta.url));

/** The test runner's environment less what scripts/chromium.mjs gpuEnv adds for Vulkan (and bin/lwm.mjs's mark that it did). */
function userEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['VK_ICD_FILENAMES', 'VK_DRIVER_FILES', 'LD_LIBRARY_PATH', 'LWM_GPU_ENV']) delete env[k];
  return env;
}

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await generate(argv, io);
  return { code, stdout: io.stdout, stderr: io.stderr };
}

describe('lwm generate on the GPU', () => {
  it("a Hugging Face folder: transformers' prompt ids and greedy ids for --prompt and --chat", async () => {
    const want = JSON.parse(await readFile(join(FOLDER, 'generate.json'), 'utf8'));
    for (const kind of ['prompt', 'chat'] as const) {
      const r = await run('--model', FOLDER, `--${kind}`, want[kind].input, '--max-tokens', String(want.max_new_tokens), '--temperature', '0', '--json');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.prompt_ids, kind).toEqual(want[kind].prompt_ids);
      expect(out.ids, kind).toEqual(want[kind].ids);
      expect(out.text, kind).toBe(want[kind].text);
    }
    // Over the memory budget: refused before the weights are read, with what would fit.
    const refused = run('--model', FOLDER, '--prompt', 'hi', '--max-tokens', '4000', '--memory-gib', '0.004');
    await expect(refused).rejects.toThrow(FileError);
    await expect(refused).rejects.toThrow(/^\S+llama-chat needs .* more than the 4\.1 MiB budget\. Would fit instead: context \d+/);
    // A folder whose tokenizer has no chat template: --chat is refused, naming it.
    const dir = await mkdtemp(join(tmpdir(), 'lwm-generate-nochat-'));
    try {
      for (const f of ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json'])
        await writeFile(join(dir, f), await readFile(join(FOLDER, f)));
      const config = JSON.parse(await readFile(join(FOLDER, 'tokenizer_config.json'), 'utf8'));
      delete config.chat_template;
      await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
      await expect(run('--model', dir, '--chat', 'hi')).rejects.toThrow(/has no chat template .* use --prompt/);
      // generation_config.json's eos ids stop generation (the stop id kept, as generate() keeps it):
      // with the 4th greedy id made the eos, the greedy ids end at its first occurrence.
      const eos = want.prompt.ids[3];
      await writeFile(join(dir, 'generation_config.json'), JSON.stringify({ bos_token_id: 0, eos_token_id: [eos] }));
      const stopped = await run('--model', dir, '--prompt', want.prompt.input, '--max-tokens', String(want.max_new_tokens), '--json');
      expect(JSON.parse(stopped.stdout).ids).toEqual(want.prompt.ids.slice(0, want.prompt.ids.indexOf(eos) + 1));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--weights f16: the same greedy ids as transformers with the matrices in f16, about half the GPU bytes', async () => {
    const want = JSON.parse(await readFile(join(FOLDER, 'generate.json'), 'utf8'));
    const bytes: Record<string, number> = {};
    for (const weights of ['f32', 'f16']) {
      const r = await run('--model', FOLDER, '--chat', want.chat.input, '--max-tokens', String(want.max_new_tokens), '--weights', weights, '--json');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).ids, weights).toEqual(want.chat.ids);
      const m = /^weights: (f16|f32), (\d+) bytes on the GPU in 1 buffer/.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      bytes[weights] = Number(m![2]);
    }
    console.log(`[generate] llama-chat weights on the GPU: ${bytes.f32} B f32, ${bytes.f16} B f16 (${(bytes.f16 / bytes.f32).toFixed(3)})`);
    expect(bytes.f16).toBeLessThan(0.6 * bytes.f32);
  });

  it('a checkpoint of ours generates with its own tokenizer; --chat is refused there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lwm-generate-gpu-'));
    try {
      const texts = ['$ ls\nfile.txt notes.md\n', '$ cat notes.md\nhello world\n', '$ pwd\n/home/user\n'];
      const tok = trainBpe(texts, { vocabSize: 300 });
      const config = presetConfig('micro', { vocabSize: tok.vocabSize, positions: 'rope', contextLength: 64 });
      const ckpt = join(dir, 'micro.safetensors');
      await writeFile(ckpt, saveCheckpoint({ config, params: initParams(config, 3), step: 0, extraMetadata: { tokenizer: JSON.stringify(tok.toJSON()) } }));
      const a = await run('--model', ckpt, '--prompt', '$ ls\n', '--max-tokens', '5', '--json');
      expect(a.stderr).toBe('');
      expect(a.code).toBe(0);
      const out = JSON.parse(a.stdout);
      expect(out.prompt_ids).toEqual(tok.encode('$ ls\n', { allowSpecial: true }));
      expect(out.ids.length).toBeGreaterThan(0);
      expect(out.ids.length).toBeLessThanOrEqual(5);
      expect(out.text).toBe(tok.decode(out.ids));
      // Sampling with a seed repeats.
      const s1 = await run('--model', ckpt, '--prompt', '$ ls\n', '--max-tokens', '5', '--temperature', '1', '--seed', '7', '--json');
      const s2 = await run('--model', ckpt, '--prompt', '$ ls\n', '--max-tokens', '5', '--temperature', '1', '--seed', '7', '--json');
      expect(JSON.parse(s2.stdout).ids).toEqual(JSON.parse(s1.stdout).ids);
      await expect(run('--model', ckpt, '--chat', 'hi')).rejects.toThrow(/--chat needs a model with a chat template/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("bin/lwm.mjs generate from a shell without the Vulkan environment: transformers' greedy ids; no adapter: what to install, exit 1", async () => {
    const want = JSON.parse(await readFile(join(FOLDER, 'generate.json'), 'utf8'));
    const argv = [
      BIN,
      'generate',
      '--model',
      FOLDER,
      '--prompt',
      want.prompt.input,
      '--max-tokens',
      String(want.max_new_tokens),
      '--temperature',
      '0',
      '--json',
    ];
    const r = spawnSync(process.execPath, argv, { encoding: 'utf8', env: userEnv() });
    expect(r.stderr).not.toContain('internal error');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).ids).toEqual(want.prompt.ids);
    if (process.platform !== 'linux') return;
    // Started as though the environment were set (LWM_GPU_ENV), with a Vulkan driver list that names no file: no adapter.
    const none = spawnSync(process.execPath, argv, {
      encoding: 'utf8',
      env: { ...userEnv(), LWM_GPU_ENV: '1', VK_ICD_FILENAMES: join(tmpdir(), 'lwm-no-such-driver.json') },
    });
    expect(none.status, none.stderr).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('lwm generate: WebGPU found no GPU adapter.\n');
    expect(none.stderr).toContain('sudo apt-get install libvulkan1');
    expect(none.stderr).not.toContain('internal error');
    // Dawn's own warnings name its C++ sources; no frame of ours.
    expect(none.stderr).not.toMatch(/^\s+at .*\.(ts|mjs):\d+/m);
  });
});
