// A turn for a Hugging Face model: the AgentWorldBench message layout rendered with the model's chat
// template (generation prompt added), the oldest turns left out a pair at a time when it does not
// fit, the context bar's counts, and clear refusals without a tokenizer or a chat template.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TurnRequest } from '../core/backend.ts';
import { HfTokenizer } from '../core/tokenizer/hf.ts';
import { hfContextReport, hfPrompt, requestMessages } from './hf.ts';

const read = (f: string) => JSON.parse(readFileSync(new URL(`../model/fixtures/hf/llama-chat/${f}`, import.meta.url), 'utf8'));
const tok = HfTokenizer.fromJSON(read('tokenizer.json'), read('tokenizer_config.json'));

const turn: TurnRequest = {
  sample: {
    domain: 'terminal',
    systemPrompt: { task_description: '', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' },
    history: [],
    action: '',
  },
  awb: { system: 'You simulate a Linux terminal.', actions: ['ls', 'cat notes.txt', 'pwd'], observations: ['notes.txt', 'buy milk'] },
};

describe('a turn for a Hugging Face model', () => {
  it('is the AgentWorldBench layout rendered with the chat template and the generation prompt', () => {
    const messages = requestMessages(turn);
    expect(messages).toEqual([
      { role: 'system', content: 'You simulate a Linux terminal.' },
      { role: 'user', content: 'ls' },
      { role: 'assistant', content: 'notes.txt' },
      { role: 'user', content: 'cat notes.txt' },
      { role: 'assistant', content: 'buy milk' },
      { role: 'user', content: 'pwd' },
    ]);
    const p = hfPrompt(tok, turn, 10_000);
    expect(p.droppedTurns).toBe(0);
    expect(p.ids).toEqual(tok.encodeChat(messages, { addGenerationPrompt: true }));
    expect(tok.renderChat(messages, { addGenerationPrompt: true })).toMatch(/pwd.*assistant/s);
  });

  it('leaves the oldest turns out, a pair at a time, to fit the room; the system prompt and the action stay', () => {
    const full = hfPrompt(tok, turn, 10_000).ids.length;
    const p = hfPrompt(tok, turn, full - 1);
    expect(p.droppedTurns).toBe(1);
    expect(p.messages.map((m) => m.content)).toEqual(['You simulate a Linux terminal.', 'cat notes.txt', 'buy milk', 'pwd']);
    // With every earlier turn left out and still too long, the system message is cut at its end.
    const last = hfPrompt(tok, { ...turn, awb: { ...turn.awb!, actions: ['pwd'], observations: [] } }, 10_000).ids.length;
    const cut = hfPrompt(tok, turn, last - 3);
    expect(cut).toMatchObject({ droppedTurns: 2, systemCut: true });
    expect(cut.ids.length).toBeLessThanOrEqual(last - 3);
    expect(cut.messages).toHaveLength(2);
    expect(cut.messages[0].content).toMatch(/^You simulate.* …$/);
    expect(cut.messages[1]).toEqual({ role: 'user', content: 'pwd' });
    // The action itself is never cut: a room it does not fit is an error.
    const alone = tok.encodeChat([{ role: 'user', content: 'pwd' }], { addGenerationPrompt: true }).length;
    expect(() => hfPrompt(tok, turn, alone - 1)).toThrow(/the current action alone takes \d+ tokens .* more than the \d+ tokens of room/);
  });

  it("counts the context bar's parts exactly, and marks the turns left out", () => {
    const room = hfPrompt(tok, turn, 10_000).ids.length - 1;
    const r = hfContextReport(tok, turn, room + 8, 8);
    expect(r).toMatchObject({ exact: true, context: room + 8, maxTokens: 8, room, truncated: true });
    expect(r.prompt).toBe(hfPrompt(tok, turn, room).ids.length);
    expect(r.parts.map((p) => [p.label, p.status])).toEqual([
      ['system prompt', 'kept'],
      ['turn 1 action', 'left out'],
      ['turn 1 observation', 'left out'],
      ['turn 2 action', 'kept'],
      ['turn 2 observation', 'kept'],
      ['action', 'kept'],
    ]);
    expect(r.system + r.history + r.action).toBe(r.prompt);
    expect(r.full).toBe(room + 1);
  });

  it('refuses without a tokenizer or a chat template, saying which', () => {
    expect(() => hfPrompt(null, turn, 100, 'Tiny')).toThrow(/Tiny has no tokenizer \(tokenizer\.json\)/);
    const plain = HfTokenizer.fromJSON(read('tokenizer.json'), { ...read('tokenizer_config.json'), chat_template: undefined });
    expect(() => hfPrompt(plain, turn, 100, 'Base')).toThrow(/Base has no chat template/);
    // A raw prompt needs no template: tokenizer(text), its end kept.
    expect(hfPrompt(plain, { prompt: 'The quick brown fox' }, 3).ids).toEqual(plain.encode('The quick brown fox').slice(-3));
  });
});
