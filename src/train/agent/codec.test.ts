// The agent policy's codecs: ours (the layout's marker tokens) and a Hugging Face model's chat
// format, whose prompts must be the chat template's own rendering (apply_chat_template, which
// HfTokenizer.encodeChat matches: hf.test.ts) and whose actions end with the template's end of turn.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chatTokenizer, ChatWrapError } from '../../core/templates/chatWrap.ts';
import { HfTokenizer } from '../../core/tokenizer/hf.ts';
import { fitPolicyPrompt, listTasks, policyTarget, type PolicySample } from '../../envs/tasks/index.ts';
import { chatCodec, ourCodec } from './codec.ts';
import { imitationSamples, policyTokenizer } from './samples.ts';

const json = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
const LLAMA = '../../model/fixtures/hf/llama-chat/';
const QWEN = '../../core/tokenizer/fixtures/hf/qwen/';
const llama = (config: Record<string, unknown> = json(`${LLAMA}tokenizer_config.json`)) => HfTokenizer.fromJSON(json(`${LLAMA}tokenizer.json`), config);

const SAMPLE: PolicySample = {
  source: 'task-1',
  domain: 'terminal',
  step: 1,
  task: 'Write the word to the file.',
  goal: 'write the word velvet into the file ~/key.txt',
  actionSpace: 'shell commands',
  initialState: '~ $',
  history: [{ action: 'ls', observation: 'notes.txt' }],
  target: 'echo velvet > ~/key.txt',
};

describe('chatCodec: a Hugging Face policy in its chat format', () => {
  it("ends an action with the template's end of turn, not the end of text, and stops at both", () => {
    const tok = llama();
    const c = chatCodec(tok, [1, 4]);
    expect(c.endAction).toBe(tok.tokenId('<|eot_id|>'));
    expect(c.stops).toEqual([4, 1]);
    expect(c.format).toMatchObject({ kind: 'chat', close: '<|eot_id|>' });
  });

  it('a prompt is the chat template rendering the task as the system message and the history as the user message', () => {
    const tok = llama();
    const c = chatCodec(tok, [1, 4]);
    const cases: [PolicySample, string][] = [
      [SAMPLE, '# History\nAction: ls\nObservation: notes.txt'],
      [{ ...SAMPLE, step: 0, history: [] }, '# History\n(none yet)'],
    ];
    for (const [sample, user] of cases) {
      const fit = fitPolicyPrompt(sample, c, 128, 'compact', c.format);
      const messages = [
        { role: 'system', content: `# Goal\n${SAMPLE.goal}` },
        { role: 'user', content: user },
      ];
      const prompt = c.encodeParts(fit.prompt);
      expect(prompt).toEqual(tok.encodeChat(messages, { addGenerationPrompt: true }));
      // The prompt and the target are the whole conversation with the action as the assistant's reply.
      expect([...prompt, ...c.encodeParts(fit.target)]).toEqual(tok.encodeChat([...messages, { role: 'assistant', content: SAMPLE.target }]));
    }
    // The full layout: the task, the actions and the start in the system message.
    const full = fitPolicyPrompt(SAMPLE, c, 128, 'full', c.format);
    expect(c.encodeParts(full.prompt)).toEqual(
      tok.encodeChat(
        [
          { role: 'system', content: `# Task\n${SAMPLE.task}\n# Actions\n${SAMPLE.actionSpace}\n# Start\n${SAMPLE.initialState}` },
          { role: 'user', content: '# History\nAction: ls\nObservation: notes.txt' },
        ],
        { addGenerationPrompt: true },
      ),
    );
  });

  it('an action or observation that spells the end of turn is text, never the token', () => {
    const tok = llama();
    const c = chatCodec(tok, [1, 4]);
    const eot = tok.tokenId('<|eot_id|>')!;
    const tricky: PolicySample = { ...SAMPLE, history: [{ action: 'cat x<|eot_id|>', observation: '<|eot_id|><|start_header_id|>' }] };
    const fit = fitPolicyPrompt(tricky, c, 128, 'compact', c.format);
    const ids = c.encodeParts(fit.prompt);
    // Only the template's own ends of turn: after the system and the user message.
    expect(ids.filter((id) => id === eot)).toHaveLength(2);
    const target = c.encodeParts(policyTarget({ ...SAMPLE, target: 'echo <|eot_id|>' }, c.format));
    expect(target.filter((id) => id === eot)).toEqual([eot]);
    expect(target[target.length - 1]).toBe(eot);
    expect(c.decode(target.slice(0, -1))).toBe('echo <|eot_id|>');
  });

  it('Qwen: the end of turn is <|im_end|>, the newline after it dropped', () => {
    const tok = HfTokenizer.fromJSON(json(`${QWEN}tokenizer.json`), json(`${QWEN}tokenizer_config.json`));
    const c = chatCodec(tok, [tok.tokenId('<|endoftext|>')!]);
    expect(c.endAction).toBe(tok.tokenId('<|im_end|>'));
    expect(c.format).toMatchObject({ kind: 'chat', close: '<|im_end|>' });
    expect(c.stops).toEqual([tok.tokenId('<|im_end|>'), tok.tokenId('<|endoftext|>')]);
  });

  it('refuses a folder without a chat template, and a template whose end of turn is more than one token', () => {
    const { chat_template: _, ...bare } = json(`${LLAMA}tokenizer_config.json`);
    expect(() => chatCodec(llama(bare), [1])).toThrow(ChatWrapError);
    expect(() => chatCodec(llama(bare), [1])).toThrow(/no chat template/);
    const wordy = { ...bare, chat_template: '{% for m in messages %}[{{ m.role }}] {{ m.content }} END OF TURN{% endfor %}' };
    expect(() => chatCodec(llama(wordy), [1])).toThrow(/ends an assistant message with " END OF TURN", \d+ tokens; an agent policy needs one token/);
  });
});

describe('ourCodec', () => {
  it("is our tokenizer's markers, its end of turn and its observation stops", () => {
    const tasks = listTasks({ split: 'train', count: 4, domains: ['terminal'], families: ['write_word'] });
    const tok = policyTokenizer(imitationSamples(tasks), 400, 'compact');
    const c = ourCodec(tok);
    expect(c.format).toEqual({ kind: 'tokens' });
    expect(c.endAction).toBe(tok.special.endTurn);
    expect(c.stops).toEqual([...tok.observationStops]);
    expect(c.pad).toBe(tok.special.pad);
    const target = c.encodeParts(policyTarget(SAMPLE, c.format));
    expect(target[target.length - 1]).toBe(tok.special.endTurn);
  });
});

describe("the training pipeline's chat tokenizer stops where the codec does", () => {
  it('Llama 3 style (end of text first among the end-of-sequence ids): the end of turn leads the stops', () => {
    const tok = llama();
    const t = chatTokenizer(tok, [1, 4]);
    // SFT's targets end with the template's <|eot_id|>; RL's rollouts and judged samples stop there, and at any end of sequence.
    expect([...t.observationStops]).toEqual([4, 1]);
    expect(t.special.endTurn).toBe(4);
    // Without a chat template, the first end-of-sequence id.
    const { chat_template: _, ...bare } = json(`${LLAMA}tokenizer_config.json`);
    expect([...chatTokenizer(llama(bare), [1, 4]).observationStops]).toEqual([1, 4]);
  });
});
