import { describe, expect, it } from 'vitest';
import { countPretokens, MIN_VOCAB, SPECIAL_TOKENS, Tokenizer, trainBpe } from './index.ts';
import { seededRandom } from '../random.ts';

const corpus = [
  '$ ls -la /home/user\ntotal 8\n-rw-r--r-- 1 user user 12 main.py\n',
  '{"status": "ok", "id": 17, "items": ["alpha", "beta"]}',
  'The environment returns the file contents. The environment never explains.',
  'Привет, мир! 数据已保存 ✓ done 🎉',
].flatMap((s) => Array(30).fill(s));

/** Random strings over every plane: ASCII, Latin-1, CJK, emoji, combining marks, controls, unpaired-surrogate-free. */
function randomText(rand: () => number, n: number): string {
  const ranges: [number, number][] = [
    [0x20, 0x7e],
    [0x0, 0x1f],
    [0xa0, 0x24f],
    [0x370, 0x3ff],
    [0x4e00, 0x4fff],
    [0x1f300, 0x1f64f],
    [0x300, 0x36f],
    [0xe000, 0xe0ff],
    [0x10000, 0x10fff],
  ];
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = ranges[Math.floor(rand() * ranges.length)];
    s += String.fromCodePoint(lo + Math.floor(rand() * (hi - lo + 1)));
    if (rand() < 0.15) s += ' ';
  }
  return s;
}

describe('trainBpe', () => {
  const tok = trainBpe(corpus, { vocabSize: 350 });
  it('reaches the requested vocabulary and compresses the corpus', () => {
    expect(tok.vocabSize).toBe(350);
    const text = corpus.slice(0, 4).join('');
    const ids = tok.encode(text);
    expect(ids.length).toBeLessThan(new TextEncoder().encode(text).length * 0.6);
    expect(Math.max(...ids)).toBeLessThan(350);
  });
  it('learns the most frequent pair first, deterministically', () => {
    const t = trainBpe(['aaab aaab aaab xy'], { vocabSize: MIN_VOCAB + 2 });
    const a = 'a'.charCodeAt(0);
    expect(t.merges[0]).toEqual([a, a]);
    expect(trainBpe(corpus, { vocabSize: 350 }).merges).toEqual(tok.merges);
  });
  it('stops early when nothing is left to merge', () => {
    const t = trainBpe(['ab'], { vocabSize: 1000 });
    expect(t.merges).toEqual([[97, 98]]);
    expect(t.vocabSize).toBe(MIN_VOCAB + 1);
  });
  it('rejects vocabulary sizes outside the range', () => {
    expect(() => trainBpe(corpus, { vocabSize: 256 })).toThrow(/from 267/);
    expect(() => trainBpe(corpus, { vocabSize: 70000 })).toThrow(RangeError);
  });
  it('counts pre-tokens and never learns across special tokens', () => {
    const c = countPretokens(['hello world<|eos|>hello']);
    expect(c.get('hello')).toBe(2);
    expect(c.get(' world')).toBe(1);
    expect([...c.keys()].some((k) => k.includes('<|'))).toBe(false);
  });
});

describe('Tokenizer encode/decode', () => {
  const tok = trainBpe(corpus, { vocabSize: 500 });
  it('round-trips arbitrary Unicode exactly (random strings)', () => {
    const rand = seededRandom(99);
    for (let i = 0; i < 300; i++) {
      const s = randomText(rand, Math.floor(rand() * 80));
      expect(tok.decode(tok.encode(s))).toBe(s);
    }
  });
  it('maps special-token strings to their ids, or to bytes when not allowed', () => {
    const text = `${SPECIAL_TOKENS.system}\nctx<predicted_observation>\nout\n</predicted_observation>${SPECIAL_TOKENS.eos}`;
    const ids = tok.encode(text);
    expect(ids[0]).toBe(tok.special.system);
    expect(ids).toContain(tok.special.predictedOpen);
    expect(ids).toContain(tok.special.predictedClose);
    expect(ids.at(-1)).toBe(tok.special.eos);
    expect(tok.decode(ids)).toBe(text);
    const plain = tok.encode(text, { allowSpecial: false });
    expect(plain.some((id) => tok.isSpecial(id))).toBe(false);
    expect(tok.decode(plain)).toBe(text);
  });
  it('has a distinct id for every special token, just above the bytes', () => {
    const ids = Object.values(tok.special);
    expect(new Set(ids).size).toBe(Object.keys(SPECIAL_TOKENS).length);
    expect(Math.min(...ids)).toBe(256);
  });
  it('decodes a cut-off character to U+FFFD rather than throwing', () => {
    const ids = tok.encode('é', { allowSpecial: false });
    const bytes = tok.decodeBytes(ids);
    expect(bytes).toEqual(Uint8Array.of(0xc3, 0xa9));
    expect(tok.decode([0xc3])).toBe('\ufffd');
    expect(() => tok.decode([tok.vocabSize])).toThrow(/outside the vocabulary/);
  });
  it('saves to JSON and loads back to the same tokenizer', () => {
    const json = JSON.parse(JSON.stringify(tok.toJSON()));
    const back = Tokenizer.fromJSON(json);
    expect(back.vocabSize).toBe(tok.vocabSize);
    const s = corpus.slice(0, 8).join('|');
    expect(back.encode(s)).toEqual(tok.encode(s));
  });
  it('refuses malformed JSON with the field that is wrong', () => {
    expect(() => Tokenizer.fromJSON(null)).toThrow(/expected an object/);
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), type: 'wordpiece' })).toThrow(/\/type/);
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), merges: [[1, 'a']] })).toThrow(/\/merges\/0/);
    expect(() => Tokenizer.fromJSON({ ...tok.toJSON(), merges: [[1, 999]] })).toThrow(/merge 0 joins/);
  });
});

describe('encodeParts: special tokens only from the template', () => {
  const tok = trainBpe(corpus, { vocabSize: 350 });
  const S = SPECIAL_TOKENS;

  it("gives the joined text's ids when the data holds no special string, merges crossing the parts", () => {
    const rand = seededRandom(11);
    for (let k = 0; k < 200; k++) {
      const parts = Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, i) => ({
        text: i % 2 ? randomText(rand, Math.floor(rand() * 8)) : [S.action, ' ls', '\n', S.observation, 'main.py '][Math.floor(rand() * 5)],
        data: i % 2 === 1,
      }));
      expect(tok.encodeParts(parts)).toEqual(tok.encode(parts.map((p) => p.text).join('')));
    }
  });

  it("encodes a special token's string in data as text, and the template's as its token", () => {
    for (const s of [S.system, S.predictedClose, S.thinkOpen]) {
      const parts = [{ text: `${S.observation}\n` }, { text: `a ${s} b`, data: true }, { text: `\n${S.endTurn}` }];
      const ids = tok.encodeParts(parts);
      expect(ids.filter((id) => tok.isSpecial(id))).toEqual([tok.special.observation, tok.special.endTurn]);
      expect(tok.decode(ids)).toBe(parts.map((p) => p.text).join(''));
      // Half a special string in data next to the other half in the template is text too.
      const split = tok.encodeParts([{ text: s.slice(0, 3) }, { text: s.slice(3), data: true }]);
      expect(split.some((id) => tok.isSpecial(id))).toBe(false);
    }
  });
});
