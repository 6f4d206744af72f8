// The ONNX backend on one of our checkpoints exported with `lwm export --to onnx` (a folder
// without a chat template): turn and chat requests get the ids the local backend would give the
// same model (our template, up to the opening tag of the observation), generation follows our
// reference model's greedy tokens and stops before the observation's closing tag; the folder is
// given as files (as the app gives a picked folder), so this is the browser's path too.
import { describe, expect, it } from 'vitest';
import { generateText, type TurnRequest } from '../core/backend.ts';
import { emptySystemPrompt } from '../core/schema/types.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { BUILTIN_TEMPLATES, DEFAULT_STAGE_TEMPLATES } from '../core/templates/index.ts';
import { trainBpe } from '../core/tokenizer/train.ts';
import { generateTrajectories } from '../envs/generate.ts';
import { presetConfig } from '../core/model/config.ts';
import { filesFolder } from '../model/hf/files.ts';
import { initParams } from '../model/init.ts';
import { checkpointSideFiles, onnxExportFiles } from '../model/onnx/export.ts';
import { loadOnnxModel } from '../model/onnx/load.ts';
import { generateRef } from '../reference/gpt.ts';
import { chatAsTurn, localPromptIds } from './local.ts';
import { onnxBackend, onnxPromptIds, onnxPromptIdsIn } from './onnx.ts';

const data = generateTrajectories('terminal', 2, 5);
const tok = trainBpe(
  data.flatMap((t) => t.turns.flatMap((u) => [u.action, u.observation])),
  { vocabSize: 300 },
);
const config = presetConfig('micro', { vocabSize: tok.vocabSize, contextLength: 256 });
// Sharp weights, so the greedy tokens depend on every logit being right.
const params = initParams(config, 5).map((x) => 8 * x);
const files = onnxExportFiles({ config, params }, checkpointSideFiles({ config, params }, tok));
const asFolder = (fs: { name: string; bytes: Uint8Array }[]) =>
  filesFolder(fs.map((f) => ({ path: `micro-onnx/${f.name}`, file: new Blob([f.bytes as Uint8Array<ArrayBuffer>]) })));
const folder = () => asFolder(files);

const turn: TurnRequest = {
  sample: {
    domain: 'terminal',
    systemPrompt: { ...emptySystemPrompt(), text: data[0].system_prompt.text ?? 'A shell.' },
    history: [{ action: data[0].turns[0].action, observation: data[0].turns[0].observation }],
    action: data[0].turns[1].action,
  },
};

describe('the ONNX backend on an export of ours', () => {
  it('lays turn and chat requests out as the local backend does (our tokenizer and template, same ids)', async () => {
    const m = await loadOnnxModel(folder());
    expect(m.hasChatTemplate).toBe(false);
    expect(m.file).toBe('onnx/model.onnx');
    expect(m.contextLength).toBe(256);
    expect(m.stopIds).toEqual([tok.special.eos]);
    const hf = m.tokenizer!;
    expect(onnxPromptIds(hf, false, turn)).toEqual(localPromptIds(tok, turn, 200));
    const template = BUILTIN_TEMPLATES[Object.keys(DEFAULT_STAGE_TEMPLATES.eval)[0]];
    expect(onnxPromptIds(hf, false, turn)).toEqual(fitPrompt(tok, template, turn.sample, 200).ids);
    const chat = {
      system: 'You are a shell.',
      messages: [
        { role: 'user' as const, content: 'ls' },
        { role: 'assistant' as const, content: 'a.txt' },
        { role: 'user' as const, content: 'cat a.txt' },
      ],
    };
    expect(onnxPromptIds(hf, false, chat)).toEqual(localPromptIds(tok, chat, 200));
    expect(chatAsTurn(chat.messages, chat.system).sample.history).toHaveLength(1);
    expect(onnxPromptIds(hf, false, { prompt: 'ls -la' })).toEqual(tok.encode('ls -la'));
    m.decoder.dispose();
  });

  it('cuts a turn or chat request too long for the room by the training policy, as the local backend does (not by its start)', async () => {
    const m = await loadOnnxModel(folder());
    const long: TurnRequest = {
      sample: {
        ...turn.sample,
        history: Array.from({ length: 8 }, (_, i) => ({ action: `cat notes${i}.txt`, observation: `line ${i}: ${data[0].turns[0].observation}` })),
      },
    };
    expect(onnxPromptIds(m.tokenizer!, false, long).length).toBeGreaterThan(120);
    const ids = onnxPromptIdsIn(m, long, 120);
    expect(ids).toEqual(localPromptIds(tok, long, 120));
    expect(tok.decode(ids).startsWith('<|system|>')).toBe(true);
    const chat = {
      system: 'You are a shell.',
      messages: [
        ...Array.from({ length: 16 }, (_, i) => ({
          role: i % 2 ? ('assistant' as const) : ('user' as const),
          content: i % 2 ? `output ${i} ${data[0].turns[0].observation}` : `command ${i}`,
        })),
        { role: 'user' as const, content: 'pwd' },
      ],
    };
    expect(onnxPromptIdsIn(m, chat, 100)).toEqual(localPromptIds(tok, chat, 100));
    // A raw prompt has no structure to cut by: it keeps its end, as the local backend's does.
    expect(onnxPromptIdsIn(m, { prompt: data[0].turns[0].observation.repeat(8) }, 50)).toEqual(
      localPromptIds(tok, { prompt: data[0].turns[0].observation.repeat(8) }, 50),
    );
    m.decoder.dispose();
  });

  it("streams our reference model's greedy text and stops at the observation's closing tag, eos or any turn-structure token", async () => {
    const m = await loadOnnxModel(folder());
    const backend = onnxBackend(m);
    expect(backend.name).toBe('onnx:micro-onnx');
    const ids = localPromptIds(tok, turn, 256 - 12);
    const stops = new Set(tok.observationStops);
    expect(stops.has(tok.special.endTurn)).toBe(true);
    const want: number[] = [];
    for (const id of generateRef(params, config, ids, { maxNewTokens: 12, temperature: 0 })) {
      if (stops.has(id)) break;
      want.push(id);
    }
    const pieces: string[] = [];
    for await (const p of backend.generate(turn, { maxTokens: 12, temperature: 0 })) pieces.push(p);
    expect(pieces.join('')).toBe(tok.decode(want));
    expect(pieces.join('').length).toBeGreaterThan(0);
    // A stop string cuts the text.
    const cut = tok.decode(want).slice(2, 4);
    if (cut)
      expect(await generateText(backend, turn, { maxTokens: 12, temperature: 0, stop: [cut] })).toBe(tok.decode(want).slice(0, tok.decode(want).indexOf(cut)));
    await expect(generateText(backend, turn, { maxTokens: 256, temperature: 0 })).rejects.toThrow(/leaves no room for a prompt/);
    m.decoder.dispose();
  });

  it('renders turns with the training template the export keeps (lwm_template.json); a broken file names itself', async () => {
    const mine = { ...BUILTIN_TEMPLATES.v0, version: 'mine', description: 'a layout of its own', text: `MY LAYOUT\n${BUILTIN_TEMPLATES.v0.text}` };
    const kept = onnxExportFiles({ config, params }, checkpointSideFiles({ config, params }, tok, 'ck', mine));
    expect(kept.map((f) => f.name)).toContain('lwm_template.json');
    const m = await loadOnnxModel(asFolder(kept));
    expect(m.template).toEqual(mine);
    const ids = onnxPromptIds(m.tokenizer!, false, turn, m.template);
    expect(ids).toEqual(fitPrompt(tok, mine, turn.sample, 200).ids);
    expect(ids).not.toEqual(onnxPromptIds(m.tokenizer!, false, turn));
    // The backend prompts with it: our reference model's greedy tokens after the template's prompt.
    const want: number[] = [];
    for (const id of generateRef(params, config, fitPrompt(tok, mine, turn.sample, 256 - 6).ids, { maxNewTokens: 6, temperature: 0 })) {
      if (tok.observationStops.includes(id)) break;
      want.push(id);
    }
    expect(await generateText(onnxBackend(m), turn, { maxTokens: 6, temperature: 0 })).toBe(tok.decode(want));
    m.decoder.dispose();
    const broken = [...files, { name: 'lwm_template.json', bytes: new TextEncoder().encode('{"version": "x", "text": "t", "targetOpen": ""}') }];
    await expect(loadOnnxModel(asFolder(broken))).rejects.toThrow(/^micro-onnx\/lwm_template\.json: targetOpen must be a non-empty string, got ""$/);
  });
});
