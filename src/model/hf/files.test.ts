// Reading a Hugging Face folder: the weights (one file or shards) against the values torch wrote
// (src/model/hf/fixtures/safetensors, from scripts/fixtures/hf_tokenizers.py), the tokenizer and generation
// config, the same through a Node path and through browser File objects, and an error for each
// way a folder can be broken that names the file and the tensor.
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSafetensors } from '../../core/model/safetensors.ts';
import {
  filesFolder,
  HfFolderError,
  indexWeights,
  loadHfTokenizer,
  openHfFolder,
  parseGenerationConfig,
  readGenerationConfig,
  readWeights,
  stopTokenIds,
  type ModelFiles,
} from './files.ts';
import { nodeFolder } from './node.ts';

const FIXTURES = new URL('./fixtures/safetensors/', import.meta.url).pathname;
const TOKENIZERS = new URL('../../core/tokenizer/fixtures/hf/', import.meta.url).pathname;
const expected = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<
  string,
  Record<string, { dtype: string; shape: number[]; values: number[] }>
>;

/** A fixture folder's files as a browser gives them: File objects under a picked parent folder. */
function asFiles(dir: string, under = 'downloads/model'): { path: string; file: File }[] {
  return readdirSync(dir).map((f) => ({ path: `${under}/${f}`, file: new File([readFileSync(join(dir, f))], f) }));
}

/** A copy of a fixture folder in a temp dir, with changes, opened from Node. */
function copyFolder(from: string, change: (dir: string) => void = () => {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'lwm-hf-'));
  for (const f of readdirSync(from)) writeFileSync(join(dir, f), readFileSync(join(from, f)));
  change(dir);
  return dir;
}

async function expectWeights(files: ModelFiles, which: string): Promise<void> {
  const index = await indexWeights(files);
  const want = expected[which];
  expect(index.tensors.map((t) => t.name).sort()).toEqual(Object.keys(want).sort());
  const got = await readWeights(files, index);
  for (const [name, w] of Object.entries(want)) {
    expect(index.byName.get(name)!.dtype, name).toBe(w.dtype);
    expect(got.get(name)!.shape, name).toEqual(w.shape);
    expect(Array.from(got.get(name)!.data), name).toEqual(w.values);
  }
}

describe('Hugging Face folder weights', () => {
  it('reads sharded F16 weights (one tensor F32) as f32 exactly, from a path and from File objects', async () => {
    await expectWeights(await nodeFolder(join(FIXTURES, 'sharded-f16')), 'sharded-f16');
    const picked = filesFolder(asFiles(join(FIXTURES, 'sharded-f16')));
    expect(picked.label).toBe('model');
    expect(picked.list()).toContain('model.safetensors.index.json');
    await expectWeights(picked, 'sharded-f16');
  });

  it('reads a single BF16 file as f32 exactly (subnormals, -0 and 3e38 included)', async () => {
    await expectWeights(await nodeFolder(join(FIXTURES, 'single-bf16')), 'single-bf16');
    await expectWeights(
      filesFolder(readdirSync(join(FIXTURES, 'single-bf16')).map((f) => new File([readFileSync(join(FIXTURES, 'single-bf16', f))], f))),
      'single-bf16',
    );
  });

  it('plans the weights from the headers alone, without reading the tensors', async () => {
    const big = writeSafetensors([{ name: 'w', dtype: 'F32', shape: [512, 1024], data: new Float32Array(512 * 1024) }]);
    const inner = filesFolder([{ path: 'm/model.safetensors', file: new Blob([big as Uint8Array<ArrayBuffer>]) }]);
    let read = 0;
    const counting: ModelFiles = {
      ...inner,
      read: async (p, s, e) => {
        const b = await inner.read(p, s, e);
        read += b.length;
        return b;
      },
    };
    const index = await indexWeights(counting);
    expect(index.byName.get('w')).toMatchObject({ dtype: 'F32', shape: [512, 1024], file: 'model.safetensors', bytes: 4 * 512 * 1024 });
    expect(read).toBeLessThan(200);
  });

  it('names a missing shard, a tensor the index puts in a shard that lacks it, and a bad header', async () => {
    const sharded = join(FIXTURES, 'sharded-f16');
    const noShard = await nodeFolder(copyFolder(sharded, (d) => writeFileSync(join(d, 'model-00002-of-00002.safetensors'), '')));
    await expect(indexWeights(noShard)).rejects.toThrow(/model-00002-of-00002\.safetensors: truncated/);
    const gone = filesFolder(asFiles(sharded).filter((f) => !f.path.endsWith('model-00002-of-00002.safetensors')));
    await expect(indexWeights(gone)).rejects.toThrow(
      /model\/model\.safetensors\.index\.json: names shard 'model-00002-of-00002\.safetensors', not in the folder/,
    );

    const index = JSON.parse(readFileSync(join(sharded, 'model.safetensors.index.json'), 'utf8'));
    index.weight_map['model.layers.1.mlp.up_proj.weight'] = 'model-00001-of-00002.safetensors';
    const extra = filesFolder([
      ...asFiles(sharded).filter((f) => !f.path.endsWith('index.json')),
      { path: 'downloads/model/model.safetensors.index.json', file: new File([JSON.stringify(index)], 'x') },
    ]);
    await expect(indexWeights(extra)).rejects.toThrow(
      /tensor 'model\.layers\.1\.mlp\.up_proj\.weight' is listed in shard 'model-00001-of-00002\.safetensors', which does not hold it/,
    );

    const bytes = new Uint8Array(readFileSync(join(sharded, 'model-00001-of-00002.safetensors')));
    bytes[8] = 0x5b; // '[': the header is no longer a JSON object
    const bad = filesFolder([
      ...asFiles(sharded).filter((f) => !f.path.endsWith('00001-of-00002.safetensors')),
      { path: 'downloads/model/model-00001-of-00002.safetensors', file: new File([bytes], 'x') },
    ]);
    await expect(indexWeights(bad)).rejects.toThrow(/model\/model-00001-of-00002\.safetensors: header must start with '\{'/);
  });

  it('refuses dtypes other than F32, F16 and BF16 naming the file and the tensor, and folders without safetensors', async () => {
    const i8 = writeSafetensors([
      { name: 'ok', dtype: 'F32', shape: [1], data: new Float32Array(1) },
      { name: 'q.weight', dtype: 'I32', shape: [2], data: new Int32Array(2) },
    ]);
    await expect(indexWeights(filesFolder([{ path: 'q/model.safetensors', file: new Blob([i8 as Uint8Array<ArrayBuffer>]) }]))).rejects.toThrow(
      /q\/model\.safetensors: tensor 'q\.weight' is I32/,
    );
    await expect(
      indexWeights(
        filesFolder([
          { path: 'p/pytorch_model.bin', file: new Blob(['x']) },
          { path: 'p/config.json', file: new Blob(['{}']) },
        ]),
      ),
    ).rejects.toThrow(/p: has no model\.safetensors or model\.safetensors\.index\.json \(it has pytorch_model\.bin: only safetensors/);
    await expect(indexWeights(filesFolder([{ path: 'e/model.safetensors.index.json', file: new Blob(['{"metadata": {}}']) }]))).rejects.toThrow(
      /has no "weight_map"/,
    );
    const index = await indexWeights(await nodeFolder(join(FIXTURES, 'single-bf16')));
    await expect(readWeights(await nodeFolder(join(FIXTURES, 'single-bf16')), index, ['lm_head.weight'])).rejects.toThrow(/has no tensor 'lm_head\.weight'/);
  });
});

describe('filesFolder', () => {
  const file = (name: string, relative?: string) => {
    const f = new File([name], name);
    if (relative !== undefined) Object.defineProperty(f, 'webkitRelativePath', { value: relative });
    return f;
  };

  it("takes a folder picker's paths (webkitRelativePath) and drops the directories all files share", async () => {
    const f = filesFolder([file('config.json', 'SmolLM2-135M/config.json'), file('model.onnx', 'SmolLM2-135M/onnx/model.onnx')]);
    expect(f.label).toBe('SmolLM2-135M');
    expect(f.list()).toEqual(['config.json', 'onnx/model.onnx']);
    expect(await f.size('onnx/model.onnx')).toBe(10);
    expect(new TextDecoder().decode(await f.read('config.json', 2, 6))).toBe('nfig');
    await expect(f.read('tokenizer.json')).rejects.toThrow(/SmolLM2-135M: has no file 'tokenizer\.json'/);
  });

  it('takes dropped files without paths as one folder', () => {
    const f = filesFolder([file('config.json'), file('tokenizer.json', '')]);
    expect(f.label).toBe('the picked files');
    expect(f.list()).toEqual(['config.json', 'tokenizer.json']);
    expect(filesFolder([file('a')], 'My model').label).toBe('My model');
  });
});

describe('Hugging Face folder tokenizer and generation config', () => {
  it('loads the tokenizer with its chat template, and prefers chat_template.jinja', async () => {
    const dir = copyFolder(join(TOKENIZERS, 'qwen'));
    const tok = await loadHfTokenizer(await nodeFolder(dir));
    expect(tok.renderChat([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true })).toContain('<|im_start|>assistant\n');
    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}');
    expect((await loadHfTokenizer(await nodeFolder(dir))).renderChat([{ role: 'user', content: 'hi' }])).toBe('[user] hi');
    await expect(loadHfTokenizer(await nodeFolder(join(FIXTURES, 'single-bf16')))).rejects.toThrow(/single-bf16: has no tokenizer\.json/);
    const slow = filesFolder([
      { path: 'gpt2/vocab.json', file: new Blob(['{}']) },
      { path: 'gpt2/merges.txt', file: new Blob(['']) },
    ]);
    await expect(loadHfTokenizer(slow)).rejects.toThrow(/gpt2: has no tokenizer\.json, only vocab\.json, merges\.txt .*save_pretrained/);
  });

  it('reads eos_token_id as one id or a list, and falls back to config.json and the tokenizer', async () => {
    expect(await readGenerationConfig(await nodeFolder(join(FIXTURES, 'sharded-f16')))).toEqual({ eosTokenIds: [2, 0], bosTokenId: 0, padTokenId: 0 });
    expect(await readGenerationConfig(await nodeFolder(join(FIXTURES, 'single-bf16')))).toEqual({ eosTokenIds: [2], bosTokenId: 1, padTokenId: null });
    expect(await readGenerationConfig(await nodeFolder(join(TOKENIZERS, 'qwen')))).toBeNull();
    expect(() => parseGenerationConfig({ eos_token_id: '2' }, 'g.json')).toThrow(/g\.json: eos_token_id: must be a token id or a list/);
    expect(() => parseGenerationConfig({ bos_token_id: [1, 2] })).toThrow(/bos_token_id: must be one token id/);
    const tok = await loadHfTokenizer(await nodeFolder(join(TOKENIZERS, 'llama3')));
    expect(stopTokenIds({ eosTokenIds: [7, 8], bosTokenId: null, padTokenId: null }, { eos_token_id: 3 }, tok)).toEqual([7, 8]);
    expect(stopTokenIds(null, { eos_token_id: [3, 4] }, tok)).toEqual([3, 4]);
    expect(stopTokenIds({ eosTokenIds: [], bosTokenId: null, padTokenId: null }, {}, tok)).toEqual([tok.tokenId('<|eot_id|>')]);
  });

  it('lists a Node folder with its subfolders and refuses a path that is not a folder', async () => {
    const dir = copyFolder(join(FIXTURES, 'single-bf16'), (d) => {
      mkdirSync(join(d, 'onnx'));
      writeFileSync(join(d, 'onnx', 'model.onnx'), 'x');
    });
    const f = await nodeFolder(dir);
    expect(f.list()).toEqual(['generation_config.json', 'model.safetensors', 'onnx/model.onnx']);
    expect(new TextDecoder().decode(await f.read('onnx/model.onnx'))).toBe('x');
    await expect(f.read('../x')).rejects.toThrow(HfFolderError);
    await expect(nodeFolder(join(dir, 'model.safetensors'))).rejects.toThrow(/is not a folder/);
    await expect(nodeFolder(join(dir, 'nope'))).rejects.toThrow(/cannot be opened \(ENOENT\)/);
  });
});

describe('openHfFolder', () => {
  it('opens a whole picked folder: config, tokenizer, generation config, stop ids and the weights plan', async () => {
    const picked = [
      ...asFiles(join(TOKENIZERS, 'qwen'), 'Qwen-tiny').filter((f) => !f.path.endsWith('expected.json')),
      ...asFiles(join(FIXTURES, 'sharded-f16'), 'Qwen-tiny'),
      { path: 'Qwen-tiny/config.json', file: new File(['{"architectures": ["Qwen2ForCausalLM"], "eos_token_id": 5}'], 'config.json') },
    ];
    const folder = await openHfFolder(filesFolder(picked));
    expect(folder.files.label).toBe('Qwen-tiny');
    expect(folder.config).toEqual({ architectures: ['Qwen2ForCausalLM'], eos_token_id: 5 });
    expect(folder.stopTokenIds).toEqual([2, 0]);
    expect(folder.weights.files).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    expect(folder.tokenizer.encode('hi')).toEqual(folder.tokenizer.encode('hi', { addSpecialTokens: false }));
    await expect(
      openHfFolder(
        filesFolder(
          picked.filter((f) => !f.path.endsWith('config.json') || f.path.endsWith('tokenizer_config.json') || f.path.endsWith('generation_config.json')),
        ),
      ),
    ).rejects.toThrow(/Qwen-tiny: has no config\.json/);
  });
});
