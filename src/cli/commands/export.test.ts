// `lwm export CKPT --to hf -o DIR`: writes the folder src/model/hf/export.test.ts holds to
// transformers, as a whole folder or into an existing one; one-line errors (exit 1) for a missing
// parent, a file in the way, a checkpoint GPT-2 cannot express or one without a tokenizer.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCheckpoint, saveCheckpoint } from '../../core/model/checkpoint.ts';
import { presetConfig } from '../../core/model/config.ts';
import { initParams } from '../../model/init.ts';
import { BUILTIN_TEMPLATES } from '../../core/templates/index.ts';
import { TEMPLATE_FILE, templateFromJson } from '../../model/templateFile.ts';
import { main } from '../main.ts';
import { captureIO } from '../testing.ts';

const FIXTURE = new URL('../../model/hf/fixtures/export/', import.meta.url).pathname;
const CKPT = `${FIXTURE}untied.safetensors`;
const expected = JSON.parse(readFileSync(`${FIXTURE}expected.json`, 'utf8')) as {
  untied: { files: Record<string, string>; probe: string; probe_ids: number[] };
};
const tmp = mkdtempSync(join(tmpdir(), 'lwm-export-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function run(...argv: string[]) {
  const io = captureIO();
  const code = await main(['export', ...argv], io);
  return { code, out: io.stdout, err: io.stderr };
}

const sha = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => [
        n,
        createHash('sha256')
          .update(readFileSync(join(dir, n)))
          .digest('hex'),
      ]),
  );

describe('lwm export --to hf', () => {
  it('writes the folder transformers was checked with, new or over an existing one', async () => {
    const dir = join(tmp, 'new');
    const r = await run(CKPT, '--to', 'hf', '-o', dir);
    expect(r.code, r.err).toBe(0);
    const { [TEMPLATE_FILE]: kept, ...files } = sha(dir);
    expect(files).toEqual(expected.untied.files);
    // The prompt template it was trained with travels beside (transformers ignores the file): v0 here, the default.
    expect(kept).toEqual(expect.any(String));
    expect(templateFromJson(JSON.parse(readFileSync(join(dir, TEMPLATE_FILE), 'utf8')), TEMPLATE_FILE)).toEqual(BUILTIN_TEMPLATES.v0);
    expect(readdirSync(tmp).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    // Our own reader of Hugging Face folders takes it too.
    const io = captureIO();
    expect(await main(['tokenize', '--model', dir, '--text', expected.untied.probe, '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout).ids).toEqual(expected.untied.probe_ids);
    const existing = join(tmp, 'existing');
    mkdirSync(existing);
    writeFileSync(join(existing, 'config.json'), 'old');
    writeFileSync(join(existing, 'README.md'), 'kept');
    expect((await run(CKPT, '--to', 'hf', '-o', existing)).code).toBe(0);
    expect(sha(existing)).toEqual({ ...expected.untied.files, [TEMPLATE_FILE]: kept, 'README.md': createHash('sha256').update('kept').digest('hex') });
  });

  it('an agent policy (lwm agent train) is exported without a world-model template', async () => {
    const ck = loadCheckpoint(new Uint8Array(readFileSync(CKPT)));
    const agent = join(tmp, 'agent.safetensors');
    writeFileSync(agent, saveCheckpoint({ ...ck, extraMetadata: { ...ck.extraMetadata, stage: 'agent' } }));
    const dir = join(tmp, 'agent');
    const r = await run(agent, '--to', 'hf', '-o', dir);
    expect(r.code, r.err).toBe(0);
    expect(sha(dir)).toEqual(expected.untied.files);
  });

  it('one line and exit 1 for a missing parent, a file in the way, a missing checkpoint', async () => {
    const missing = await run(CKPT, '--to', 'hf', '-o', join(tmp, 'no', 'such', 'dir'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^lwm export: .*no such directory: .*no[/\\]such\)\n$/);
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const inTheWay = await run(CKPT, '--to', 'hf', '-o', file);
    expect(inTheWay.code).toBe(1);
    expect(inTheWay.err).toMatch(/^lwm export: .*a file is in the way\)\n$/);
    const noCkpt = await run(join(tmp, 'none.safetensors'), '--to', 'hf', '-o', join(tmp, 'x'));
    expect(noCkpt.code).toBe(1);
    expect(noCkpt.err.split('\n').length).toBe(2);
  });

  it('refuses a RoPE checkpoint and one without a tokenizer, writing nothing', async () => {
    const tokenizer = loadCheckpoint(new Uint8Array(readFileSync(CKPT))).extraMetadata!.tokenizer;
    const rope = presetConfig('micro', { positions: 'rope', vocabSize: 330 });
    const ropePath = join(tmp, 'rope.safetensors');
    writeFileSync(ropePath, saveCheckpoint({ config: rope, params: initParams(rope, 1), step: 0, extraMetadata: { tokenizer } }));
    const r = await run(ropePath, '--to', 'hf', '-o', join(tmp, 'rope-out'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^lwm export: .*rope\.safetensors: cannot export as a Hugging Face GPT-2: it uses rotary \(RoPE\) positions.*\n$/);
    const bare = presetConfig('micro');
    const barePath = join(tmp, 'bare.safetensors');
    writeFileSync(barePath, saveCheckpoint({ config: bare, params: initParams(bare, 1), step: 0 }));
    const b = await run(barePath, '--to', 'hf', '-o', join(tmp, 'bare-out'));
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/holds no tokenizer/);
    expect(readdirSync(tmp).filter((n) => n.includes('-out'))).toEqual([]);
  });

  it('usage errors exit 2', async () => {
    expect((await run(CKPT, '-o', join(tmp, 'u'))).code).toBe(2);
    expect((await run(CKPT, '--to', 'gguf', '-o', join(tmp, 'u'))).err).toMatch(/unknown format \(known: hf, onnx\)/);
    expect((await run(CKPT, '--to', 'hf')).code).toBe(2);
    expect((await run('--to', 'hf', '-o', join(tmp, 'u'))).code).toBe(2);
  });
});
