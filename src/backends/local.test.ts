// The local backend's prompt, without a GPU: the tokens the model is given for each request form.
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../envs/generate.ts';
import { BUILTIN_TEMPLATES, renderTrajectory } from '../core/templates/index.ts';
import { SPECIAL_TOKENS, trainBpe } from '../core/tokenizer/index.ts';
import { expandTurns } from '../core/turns/index.ts';
import { encodeSftSample } from '../train/data.ts';
import { sharedPrefixLength } from '../model/generate.ts';
import type { GpuGenerator } from '../model/generate.ts';
import { localBackend, localPromptIds } from './local.ts';

const data = [...generateTrajectories('terminal', 4, 11), ...generateTrajectories('web', 2, 11)];
const tok = trainBpe(
  data.map((t) => renderTrajectory(BUILTIN_TEMPLATES.v0, t)),
  { vocabSize: 400 },
);
const samples = expandTurns(data);

describe('local backend prompt', () => {
  it('is, for a turn request, byte for byte the prompt of the training row with the same sample and budget', () => {
    let compared = 0;
    for (const template of [BUILTIN_TEMPLATES.v0, BUILTIN_TEMPLATES.v2, BUILTIN_TEMPLATES.compact]) {
      for (const budget of [65, 129, 257]) {
        for (const sample of samples) {
          const row = encodeSftSample(tok, sample, template, 1, { maxTokens: budget });
          const open = tok.encode(template.targetOpen, { allowSpecial: true }).length;
          // The generator's room: the budget the row's context was fitted to, plus the opening tag it is given.
          const ids = localPromptIds(tok, { sample, template }, row.contextBudget! + open);
          expect(ids, `${template.version} ${budget} ${sample.trajectoryId}#${sample.turnIndex}`).toEqual(row.ids.slice(0, row.promptLength + open));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('cuts a chat request by the same policy: system marker first, newest turns kept, the opening tag last', () => {
    const system = `A shell. ${'Long task description. '.repeat(40)}`;
    const messages = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      content: i % 2 ? `output ${i}` : `command ${i}`,
    }));
    messages.push({ role: 'user', content: 'ls -la' });
    const ids = localPromptIds(tok, { system, messages }, 60);
    expect(ids.length).toBeLessThanOrEqual(60);
    const text = tok.decode(ids);
    expect(text.startsWith(`${SPECIAL_TOKENS.system}\n`)).toBe(true);
    expect(text.endsWith(`${SPECIAL_TOKENS.action}\nls -la\n${SPECIAL_TOKENS.observation}\n${SPECIAL_TOKENS.predictedOpen}\n`)).toBe(true);
    expect(text).toContain(`${SPECIAL_TOKENS.action}\ncommand 10\n${SPECIAL_TOKENS.observation}\noutput 11\n${SPECIAL_TOKENS.endTurn}\n`);
    expect(text).not.toContain('command 0\n');
    // Uncut, it is the layout the backend always used for chat.
    const short = tok.decode(localPromptIds(tok, { system: 'a shell', messages: [{ role: 'user', content: 'pwd' }] }, 200));
    expect(short).toBe(`${SPECIAL_TOKENS.system}\na shell\n${SPECIAL_TOKENS.action}\npwd\n${SPECIAL_TOKENS.observation}\n${SPECIAL_TOKENS.predictedOpen}\n`);
  });

  it("gives a trajectory's next turn the previous turn's prompt as its start, all but its tail (what the generator's prefix reuse feeds on)", () => {
    for (const template of [BUILTIN_TEMPLATES.v0, BUILTIN_TEMPLATES.v2, BUILTIN_TEMPLATES.compact]) {
      const open = tok.encode(template.targetOpen, { allowSpecial: true }).length;
      let pairs = 0;
      for (let i = 1; i < samples.length; i++) {
        if (samples[i].trajectoryId !== samples[i - 1].trajectoryId) continue;
        const prev = localPromptIds(tok, { sample: samples[i - 1], template }, 1 << 20);
        const next = localPromptIds(tok, { sample: samples[i], template }, 1 << 20);
        const shared = sharedPrefixLength(prev, next);
        // The tail: the opening tag, and the newline compact's current action has after the observation marker where a history turn has none.
        expect(prev.length - shared, `${template.version} ${samples[i].trajectoryId}#${samples[i].turnIndex}`).toBeLessThanOrEqual(open + 1);
        pairs++;
      }
      expect(pairs).toBeGreaterThan(20);
    }
  });

  it('keeps the end of a raw prompt, which has no structure to cut by', () => {
    const ids = localPromptIds(tok, { prompt: 'x'.repeat(50) + 'END' }, 10);
    expect(ids.length).toBeLessThanOrEqual(10);
    expect(tok.decode(ids).endsWith('END')).toBe(true);
  });
});

describe('local backend stream', () => {
  it('ends an observation at any token of the turn structure, not only at its closing tag', async () => {
    // A model trained on trajectory rows closes history observations with <|end_turn|> and may close its prediction so.
    for (const stop of ['endTurn', 'action', 'observation', 'system', 'predictedClose', 'eos'] as const) {
      const seq = [...tok.encode('a.txt'), tok.special[stop], ...tok.encode('more')];
      let asked: readonly number[] = [];
      const gen = {
        limits: { maxLength: 64 },
        async *generate(_ids: number[], o: { stop: readonly number[] }) {
          asked = o.stop;
          for (const id of seq) {
            yield id;
            if (o.stop.includes(id)) return;
          }
        },
      } as unknown as GpuGenerator;
      let text = '';
      for await (const piece of localBackend(gen, tok).generate({ prompt: 'x' }, { maxTokens: 20, temperature: 0 })) text += piece;
      expect(text, stop).toBe('a.txt');
      expect([...asked].sort()).toEqual([...tok.observationStops].sort());
    }
    // <think> and the opening tag come before a reasoning model's observation: they do not end it.
    expect(tok.observationStops).not.toContain(tok.special.thinkOpen);
    expect(tok.observationStops).not.toContain(tok.special.predictedOpen);
    // An observation's own text never encodes to a stop: the characters of <|end_turn|> are text.
    const data = tok.encodeParts([{ text: 'a <|end_turn|> b </predicted_observation>', data: true }]);
    expect(data.some((id) => tok.observationStops.includes(id))).toBe(false);
  });

  it('sends a tail that never decoded whole (cut mid-character at max tokens), as the Hugging Face and ONNX backends do', async () => {
    // 'é' is two bytes (ids 0xc3 0xa9: ids 0-255 are the bytes); generation stops after its first byte.
    const ids = [...tok.encode('ok '), 0xc3];
    const gen = {
      limits: { maxLength: 64 },
      async *generate() {
        yield* ids;
      },
    } as unknown as GpuGenerator;
    let text = '';
    for await (const piece of localBackend(gen, tok).generate({ prompt: 'x' }, { maxTokens: 4, temperature: 0 })) text += piece;
    expect(text).toBe(tok.decode(ids));
    expect(text).toBe('ok \uFFFD');
  });
});
