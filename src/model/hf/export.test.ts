// `lwm export --to hf` held to transformers: scripts/fixtures/hf_export_check.py exported the
// micro checkpoints in fixtures/export/ (untied head, mlpRatio 2, eps 1e-6; and GPT-2's own choices,
// tied), loaded each with AutoModelForCausalLM and AutoTokenizer and
// recorded their logits, ids and the exported files' sha256 (expected.json). Here: our export of
// the same checkpoint is those bytes, our reference model gives those logits, our tokenizer and
// @huggingface/tokenizers on our tokenizer.json give those ids.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Tokenizer as HfTokenizerImpl } from '@huggingface/tokenizers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkpointTokenizer } from '../../backends/checkpoint.ts';
import { HfExportError, hfTokenizerJson, portablePattern } from '../../core/tokenizer/hfExport.ts';
import { Tokenizer } from '../../core/tokenizer/tokenizer.ts';
import { trainBpe } from '../../core/tokenizer/train.ts';
import { gptForward } from '../../reference/gpt.ts';
import { loadCheckpoint } from '../../core/model/checkpoint.ts';
import { presetConfig } from '../../core/model/config.ts';
import { initParams } from '../init.ts';
import { readSafetensors, tensorToF32 } from '../../core/model/safetensors.ts';
import { HfExportRefused, hfExportFiles } from './export.ts';

const DIR = new URL('./fixtures/export/', import.meta.url).pathname;
interface Expected {
  ids: number[];
  logits: number[][];
  probe: string;
  probe_ids: number[];
  /** Texts where JavaScript's and Oniguruma's regex classes differ, and AutoTokenizer's ids of each. */
  texts: string[];
  text_ids: number[][];
  eos_token_id: number;
  files: Record<string, string>;
}
const recorded = JSON.parse(readFileSync(`${DIR}expected.json`, 'utf8')) as Record<'untied' | 'tied', Expected>;
const load = (name: string) => loadCheckpoint(new Uint8Array(readFileSync(`${DIR}${name}.safetensors`)), { source: name });
const ck = load('untied');
const tok = checkpointTokenizer(ck, 'fixture');
const expected = recorded.untied;
const files = hfExportFiles(ck, tok);
const MODELS = ['untied', 'tied'] as const;
const file = (name: string) => files.find((f) => f.name === name)!.bytes;
const text = (name: string) => JSON.parse(new TextDecoder().decode(file(name)));

describe('Hugging Face export of a GPT-2 checkpoint', () => {
  it.each(MODELS)('writes byte for byte the folder transformers loaded (%s)', (name) => {
    const c = load(name);
    const sha = Object.fromEntries(hfExportFiles(c, checkpointTokenizer(c, name)).map((f) => [f.name, createHash('sha256').update(f.bytes).digest('hex')]));
    expect(sha).toEqual(recorded[name].files);
  });

  it.each(MODELS)('our model gives the logits transformers computed from the export (%s, 1e-4 relative)', (name) => {
    const ck = load(name);
    const expected = recorded[name];
    expect(ck.config.tiedEmbeddings).toBe(name === 'tied');
    const T = expected.ids.length;
    const ours = gptForward(ck.params, ck.config, expected.ids, 1, T).logits;
    const V = ck.config.vocabSize;
    let worst = 0;
    for (let t = 0; t < T; t++) {
      for (let v = 0; v < V; v++) {
        const want = expected.logits[t][v];
        worst = Math.max(worst, Math.abs(ours[t * V + v] - want) / Math.max(1, Math.abs(want)));
      }
    }
    expect(expected.logits.length * expected.logits[0].length).toBe(T * V);
    expect(worst).toBeLessThan(1e-4);
  });

  it("our tokenizer gives AutoTokenizer's ids on multilingual, code, whitespace and special-token text", () => {
    expect(tok.encode(expected.probe)).toEqual(expected.probe_ids);
    expect(tok.decode(expected.probe_ids)).toBe(expected.probe);
    expect(tok.special.eos).toBe(expected.eos_token_id);
  });

  it("our tokenizer gives AutoTokenizer's ids where JavaScript's and Oniguruma's \\s, \\d, \\w differ", () => {
    expect(expected.texts.length).toBeGreaterThan(200);
    const hf = new HfTokenizerImpl(text('tokenizer.json'), text('tokenizer_config.json'));
    expected.texts.forEach((s, i) => {
      expect(tok.encode(s), JSON.stringify(s)).toEqual(expected.text_ids[i]);
      expect(hf.encode(s).ids, JSON.stringify(s)).toEqual(expected.text_ids[i]);
    });
  });

  it('portablePattern spells out the classes and refuses word boundaries', () => {
    expect(portablePattern('\\d+|[^\\s\\w]')).toBe('[0-9]+|[^\\t\\n\\v\\f\\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeffA-Za-z0-9_]');
    expect(portablePattern('\\S\\p{L}[\\b]')).toBe('[^\\t\\n\\v\\f\\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]\\p{L}[\\b]');
    expect(() => portablePattern('\\bx')).toThrow(/word boundary/);
    expect(() => portablePattern('[\\S]')).toThrow(/inside a character class/);
  });

  it('@huggingface/tokenizers on the exported tokenizer.json gives our ids', () => {
    const hf = new HfTokenizerImpl(text('tokenizer.json'), text('tokenizer_config.json'));
    expect(hf.encode(expected.probe).ids).toEqual(expected.probe_ids);
    expect(hf.decode(expected.probe_ids)).toBe(expected.probe);
    // And on texts of another tokenizer, trained on other text, where the merges differ.
    const other = trainBpe(
      ['  indented\n\tcode(x)  ', 'naïve café — 東京 ', 'aaaa bbbb'].flatMap((s) => [s, s + s]),
      { vocabSize: 300 },
    );
    const otherHf = new HfTokenizerImpl(hfTokenizerJson(other), {});
    for (const s of ['  indented\n\tcode(x) naïve', 'café 東京<|eos|>aaaa   ', "it's\r\n\r\n  "]) expect(otherHf.encode(s).ids).toEqual(other.encode(s));
  });

  it('@huggingface/tokenizers agrees with our tokenizer on random text (pieces of the probe, whitespace, any Unicode)', () => {
    const hf = new HfTokenizerImpl(text('tokenizer.json'), text('tokenizer_config.json'));
    const piece = fc.oneof(
      fc.constantFrom(...expected.probe.split(/(?=\s)|(?<=\s)/u), ...tok.specialTokens, ' ', '  ', '\t', '\n', '\r\n', "'s", "'ll", '1', '42'),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const s = parts.join('');
        expect(hf.encode(s).ids).toEqual(tok.encode(s));
      }),
      { numRuns: 300, seed: 14 },
    );
  });

  it('writes GPT-2 names in the Conv1D [in, out] layout, lm_head when untied, and the eos id', () => {
    const st = readSafetensors(file('model.safetensors'));
    expect(st.metadata).toEqual({ format: 'pt' });
    const attn = st.byName.get('transformer.h.1.attn.c_attn.weight')!;
    expect(attn.shape).toEqual([8, 24]);
    expect(st.byName.get('transformer.h.0.mlp.c_fc.weight')!.shape).toEqual([8, 16]);
    expect(st.byName.get('lm_head.weight')!.shape).toEqual([ck.config.vocabSize, 8]);
    expect(st.byName.has('transformer.wpe.weight')).toBe(true);
    const tied = load('tied');
    const tiedSt = readSafetensors(hfExportFiles(tied, checkpointTokenizer(tied, 'tied')).find((f) => f.name === 'model.safetensors')!.bytes);
    expect(tiedSt.byName.has('lm_head.weight')).toBe(false);
    expect(tiedSt.byName.get('transformer.h.0.mlp.c_fc.weight')!.shape).toEqual([8, 32]);
    // Reading the export back as a checkpoint (the `transformer.` names) gives the same weights.
    const back = loadCheckpoint(file('model.safetensors'), { config: ck.config });
    expect(back.params).toEqual(ck.params);
    expect(tensorToF32(attn).length).toBe(8 * 24);
    const config = text('config.json');
    expect(config).toMatchObject({
      architectures: ['GPT2LMHeadModel'],
      model_type: 'gpt2',
      n_inner: 16,
      layer_norm_epsilon: 1e-6,
      tie_word_embeddings: false,
      activation_function: 'gelu_new',
      eos_token_id: tok.special.eos,
    });
    expect(text('generation_config.json').eos_token_id).toBe(tok.special.eos);
    expect(text('tokenizer_config.json').eos_token).toBe('<|eos|>');
  });

  it('refuses what GPT-2 cannot compute exactly: RMSNorm, RoPE', () => {
    for (const [over, why] of [
      [{ norm: 'rmsnorm' }, /RMSNorm where GPT-2 has LayerNorm/],
      [{ positions: 'rope' }, /rotary \(RoPE\) positions/],
    ] as const) {
      const config = presetConfig('micro', { ...over, vocabSize: tok.vocabSize });
      expect(() => hfExportFiles({ config, params: initParams(config, 1) }, tok, 'x.safetensors')).toThrow(HfExportRefused);
      expect(() => hfExportFiles({ config, params: initParams(config, 1) }, tok, 'x.safetensors')).toThrow(why);
    }
    const small = presetConfig('micro', { vocabSize: 256 });
    expect(() => hfExportFiles({ config: small, params: initParams(small, 1) }, tok)).toThrow(/tokenizer has 330 tokens but the model only 256/);
  });

  it('refuses a tokenizer in which two ids spell the same bytes', () => {
    // aa = 256, then aa·a and a·aa both spell "aaa".
    const dup = new Tokenizer(
      [
        [97, 97],
        [256, 97],
        [97, 256],
      ],
      [],
    );
    expect(() => hfTokenizerJson(dup)).toThrow(HfExportError);
    expect(() => hfTokenizerJson(dup)).toThrow(/ids 257 \(merge 1\) and 258 \(merge 2\) spell the same bytes "aaa"/);
  });
});
