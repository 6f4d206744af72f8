// Text is never a control token: a sample's own text (system-prompt fields, actions, observations,
// labels, reasoning traces) that holds a special token's string is tokenised as the characters it
// is, in training rows (SFT, labels, CPT), in generators' prompts (RL, the local, ONNX and trained-
// chat backends) and in a Hugging Face model's chat prompt. Only the template's own text gives
// special ids: each row has exactly the special ids of the same row with the string taken out,
// and decodes back to the text the template renders.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TurnRequest } from '../core/backend.ts';
import { emptySystemPrompt, type Trajectory } from '../core/schema/types.ts';
import { chatTokenizer, chatWrap, wrapTemplate } from '../core/templates/chatWrap.ts';
import { BUILTIN_TEMPLATES, renderSample, renderTrajectory, templateLiterals, type PromptTemplate } from '../core/templates/index.ts';
import { HfTokenizer } from '../core/tokenizer/hf.ts';
import { hfTokenizerJson } from '../core/tokenizer/hfExport.ts';
import { SPECIAL_TOKENS, Tokenizer, trainBpe } from '../core/tokenizer/index.ts';
import type { TurnSample } from '../core/turns/index.ts';
import { hfPrompt } from '../backends/hf.ts';
import { localPromptIds } from '../backends/local.ts';
import { onnxPromptIdsIn } from '../backends/onnx.ts';
import { trainedChat } from '../backends/trainedChat.ts';
import { encodePrompt, encodeSftSample } from './data.ts';
import { labelledRows, stageRows } from './stages/rows.ts';

const OURS = [SPECIAL_TOKENS.system, SPECIAL_TOKENS.predictedClose, SPECIAL_TOKENS.thinkOpen];
const PLACES = ['system', 'observation', 'action', 'label'] as const;
type Place = (typeof PLACES)[number];

const base: TurnSample = {
  trajectoryId: 't1',
  turnIndex: 2,
  domain: 'terminal',
  systemPrompt: { ...emptySystemPrompt(), task_description: 'Simulate a shell.', action_space: 'bash commands' },
  history: [
    { action: 'ls', observation: 'notes.txt' },
    { action: 'cat notes.txt', observation: 'buy milk' },
  ],
  action: 'echo done',
  targetObservation: 'done',
};

/** The sample with `s` inside one of its texts. */
function withText(place: Place, s: string): TurnSample {
  const x = structuredClone(base);
  const inside = (t: string) => `${t} ${s} after`;
  if (place === 'system') x.systemPrompt.task_description = inside(x.systemPrompt.task_description);
  if (place === 'observation') x.history[1].observation = inside(x.history[1].observation);
  if (place === 'action') x.action = inside(x.action);
  if (place === 'label') x.targetObservation = inside(x.targetObservation);
  return x;
}

const corpus = [
  ...OURS,
  'Simulate a shell. bash commands ls notes.txt cat buy milk echo done after',
  ...Object.values(BUILTIN_TEMPLATES).flatMap((t) => templateLiterals(t.text)),
];
const TOKENIZERS: [string, Tokenizer][] = [
  ['BPE', trainBpe(corpus, { vocabSize: 420 })],
  ['byte', new Tokenizer([])],
];
const specialsOf = (tok: Tokenizer, ids: number[]) => ids.filter((id) => tok.isSpecial(id));

/** `needle` occurs in `ids` as a contiguous run. */
function hasRun(ids: number[], needle: number[]): boolean {
  outer: for (let i = 0; i + needle.length <= ids.length; i++) {
    for (let j = 0; j < needle.length; j++) if (ids[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

describe.each(TOKENIZERS)("our %s tokenizer: a special token's string in the data is text", (_name, tok) => {
  const templates: PromptTemplate[] = [BUILTIN_TEMPLATES.v0, BUILTIN_TEMPLATES.v2];
  for (const t of templates) {
    for (const place of PLACES) {
      it.each(OURS)(`${t.version}, SFT row, in the ${place}: %s`, (s) => {
        const sample = withText(place, s);
        const row = encodeSftSample(tok, sample, t, 1, { maxTokens: 100_000 });
        const clean = encodeSftSample(tok, withText(place, ''), t, 1, { maxTokens: 100_000 });
        // The template's special ids, all of them and no more; the data's span is its plain text.
        expect(specialsOf(tok, row.ids)).toEqual(specialsOf(tok, clean.ids));
        expect(specialsOf(tok, clean.ids).length).toBeGreaterThan(2);
        expect(hasRun(row.ids, tok.encode(` ${s} after`, { allowSpecial: false }))).toBe(true);
        expect(tok.decode(row.ids)).toBe(renderSample(t, sample).text);
      });
    }
    it.each(OURS)(`${t.version}, a generator's prompt (RL, the local backend), in the observation and the action: %s`, (s) => {
      for (const place of ['system', 'observation', 'action'] as const) {
        const sample = withText(place, s);
        const clean = encodePrompt(tok, withText(place, ''), t, 100_000);
        for (const ids of [encodePrompt(tok, sample, t, 100_000), localPromptIds(tok, { sample, template: t }, 100_000)]) {
          expect(specialsOf(tok, ids), place).toEqual(specialsOf(tok, clean));
          const r = renderSample(t, sample);
          expect(tok.decode(ids)).toBe(r.text.slice(0, r.targetStart));
        }
      }
    });
  }

  it.each(OURS)('a label and its reasoning trace (labelled rows): %s', (s) => {
    const p = { tok, T: 100_000 };
    const label = { sample: withText('label', s), reasoning: `the file ${s} is there` };
    const [row] = labelledRows(p, [label], { v0: 1 }, 0, BUILTIN_TEMPLATES, 0.5);
    const [clean] = labelledRows(p, [{ sample: withText('label', ''), reasoning: 'the file  is there' }], { v0: 1 }, 0, BUILTIN_TEMPLATES, 0.5);
    expect(specialsOf(tok, row.ids)).toEqual(specialsOf(tok, clean.ids));
    expect(tok.decode(row.ids)).toBe(renderSample(BUILTIN_TEMPLATES.v0, label.sample, { reasoning: label.reasoning }).text);
    // The trace, from <think> to </think> and its newline, carries the reasoning weight.
    const open = row.ids.indexOf(tok.special.thinkOpen);
    const close = row.ids.indexOf(tok.special.thinkClose);
    expect(row.weights.slice(open, close + 2).every((w) => w === 0.5)).toBe(true);
    expect(row.weights[close + 2]).toBe(0);
  });

  it.each(OURS)('a CPT row of a trajectory: %s', (s) => {
    const traj = (x: string): Trajectory => ({
      id: 't1',
      domain: 'terminal',
      system_prompt: { ...emptySystemPrompt(), task_description: `Simulate ${x}` },
      turns: [
        { action: `ls ${x}`, observation: `notes.txt ${x}` },
        { action: 'pwd', observation: '/home' },
      ],
    });
    const rows = stageRows('cpt', { tok, T: 100_000 }, [traj(s)], { v0: 1 }, 0, false);
    const clean = stageRows('cpt', { tok, T: 100_000 }, [traj('')], { v0: 1 }, 0, false);
    expect(specialsOf(tok, rows[0].ids)).toEqual(specialsOf(tok, clean[0].ids));
    expect(tok.decode(rows[0].ids)).toBe(`${SPECIAL_TOKENS.bos}${renderTrajectory(BUILTIN_TEMPLATES.v0, traj(s))}${SPECIAL_TOKENS.eos}`);
  });
});

// ---- Hugging Face tokenizers ------------------------------------------------------------------

/** Our BPE as a Hugging Face folder's tokenizer (an export's): every special string of ours is an added token there. */
const ourBpe = TOKENIZERS[0][1];
const exported = HfTokenizer.fromJSON(hfTokenizerJson(ourBpe), {});
const addedIds = (json: { added_tokens: { id: number }[] }) => new Set(json.added_tokens.map((a) => a.id));
const exportedAdded = addedIds(hfTokenizerJson(ourBpe) as { added_tokens: { id: number }[] });

const fixture = (f: string) => JSON.parse(readFileSync(new URL(`../core/tokenizer/fixtures/hf/qwen/${f}`, import.meta.url), 'utf8'));
const qwen = HfTokenizer.fromJSON(fixture('tokenizer.json'), fixture('tokenizer_config.json'));
const qwenAdded = addedIds(fixture('tokenizer.json'));
const QWEN_STRINGS = ['<think>', '<|im_end|>', '<|im_start|>'];

describe("a Hugging Face tokenizer: a special token's string in the data is text", () => {
  const pick = (added: Set<number>, ids: number[]) => ids.filter((id) => added.has(id));

  for (const place of PLACES) {
    it.each(OURS)(`an export of ours, SFT row through the pipeline's adapter, in the ${place}: %s`, (s) => {
      const tok = chatTokenizer(exported, [exported.tokenId(SPECIAL_TOKENS.eos)!]);
      const t = BUILTIN_TEMPLATES.v0;
      const sample = withText(place, s);
      const row = encodeSftSample(tok, sample, t, 1, { maxTokens: 100_000 });
      const clean = encodeSftSample(tok, withText(place, ''), t, 1, { maxTokens: 100_000 });
      expect(pick(exportedAdded, row.ids)).toEqual(pick(exportedAdded, clean.ids));
      expect(pick(exportedAdded, clean.ids).length).toBeGreaterThan(2);
      expect(exported.decode(row.ids)).toBe(renderSample(t, sample).text);
      // The same ids as our own tokenizer gives the same row.
      expect(row.ids).toEqual(encodeSftSample(ourBpe, sample, t, 1, { maxTokens: 100_000 }).ids);
    });
  }

  it.each(OURS)('an export of ours served without a chat template (the ONNX backend): %s', (s) => {
    const m = { tokenizer: exported, hasChatTemplate: false, stopIds: [], template: BUILTIN_TEMPLATES.v0 };
    for (const place of ['system', 'observation', 'action'] as const) {
      const ids = onnxPromptIdsIn(m, { sample: withText(place, s) }, 100_000);
      const clean = onnxPromptIdsIn(m, { sample: withText(place, '') }, 100_000);
      expect(pick(exportedAdded, ids), place).toEqual(pick(exportedAdded, clean));
      expect(ids).toEqual(localPromptIds(ourBpe, { sample: withText(place, s), template: BUILTIN_TEMPLATES.v0 }, 100_000));
    }
  });

  for (const place of PLACES) {
    it.each(QWEN_STRINGS)(`a fine-tune of a chat model (our template in its chat format), SFT row, in the ${place}: %s`, (s) => {
      const tok = chatTokenizer(qwen, [qwen.tokenId('<|im_end|>')!]);
      // Generation (SFT's judged samples, RL rollouts) stops at the model's end of turn.
      expect(tok.observationStops).toEqual([qwen.tokenId('<|im_end|>')]);
      const t = wrapTemplate(BUILTIN_TEMPLATES.v0, chatWrap(qwen));
      const sample = withText(place, s);
      const row = encodeSftSample(tok, sample, t, 1, { maxTokens: 100_000 });
      const clean = encodeSftSample(tok, withText(place, ''), t, 1, { maxTokens: 100_000 });
      expect(pick(qwenAdded, row.ids)).toEqual(pick(qwenAdded, clean.ids));
      expect(pick(qwenAdded, clean.ids).length).toBeGreaterThan(2);
      expect(qwen.decode(row.ids)).toBe(renderSample(t, sample).text);
    });
  }

  it.each(QWEN_STRINGS)('a fine-tune of a chat model served in its trained layout: %s', (s) => {
    const served = trainedChat(qwen, [qwen.tokenId('<|im_end|>')!], BUILTIN_TEMPLATES.v0);
    for (const place of ['system', 'observation', 'action'] as const) {
      const ids = served.prompt({ sample: withText(place, s) }, 100_000).fitted.ids;
      const clean = served.prompt({ sample: withText(place, '') }, 100_000).fitted.ids;
      expect(pick(qwenAdded, ids), place).toEqual(pick(qwenAdded, clean));
    }
  });

  it.each(QWEN_STRINGS)('a pretrained chat model given a turn (its chat template, the AgentWorldBench layout): %s', (s) => {
    const turn = (x: string): TurnRequest => ({
      sample: { domain: 'terminal', systemPrompt: emptySystemPrompt(), history: [], action: '' },
      awb: { system: `You simulate a shell. ${x}`, actions: [`ls ${x}`, 'cat notes.txt', `pwd ${x}`], observations: [`notes.txt ${x}`, 'buy milk'] },
    });
    const p = hfPrompt(qwen, turn(s), 100_000);
    const clean = hfPrompt(qwen, turn(''), 100_000);
    expect(pick(qwenAdded, p.ids)).toEqual(pick(qwenAdded, clean.ids));
    expect(qwen.decode(p.ids)).toBe(qwen.renderChat(p.messages, { addGenerationPrompt: true }));
  });
});
