// An ONNX causal-LM folder as an LwmBackend (onnxruntime-web: WebGPU where the page has it, else
// WASM — so a browser without WebGPU can still query and judge a model). How a request becomes
// token ids depends on the folder:
//   - with a chat template (a pretrained instruct model): chat requests as given, turn requests
//     in the AgentWorldBench message layout an endpoint is sent (src/core/bench/awbLayout.ts),
//     rendered with the template and its generation prompt;
//   - without one (our own checkpoints exported with `lwm export --to onnx`): turn and chat
//     requests rendered with our prompt template (the one the checkpoint was trained with, which
//     the export keeps in lwm_template.json; else the default), up to the opening tag of the predicted
//     observation, as the local backend lays them out, and generation also stops at its closing tag;
//   - with both a chat template and lwm_template.json (an export of one of our fine-tunes of a
//     pretrained model): turn and chat requests in the layout it was trained on (./trainedChat.ts:
//     our template wrapped in the chat format, fitted by the training policy, the same ids as the
//     SFT pipeline's), its text stopping at the observation's closing tag;
//   - a raw prompt: tokenized as transformers' tokenizer(text) does.
// A prompt longer than the context is fitted as a Hugging Face folder's is (with a chat template:
// earlier turns left out, then the system message cut), or by the local backend's policy (without
// one); a raw prompt keeps its end. onnxruntime-web is
// loaded by the model loader (src/model/onnx/session.ts) on first use only.
import { isChatRequest, isTurnRequest, type GenerateOptions, type GenerateRequest, type LwmBackend, type TurnRequest } from '../core/backend.ts';
import { awbMessages } from '../core/bench/awbLayout.ts';
import { fitPrompt } from '../core/templates/fit.ts';
import { BUILTIN_TEMPLATES, DEFAULT_STAGE_TEMPLATES, type PromptTemplate } from '../core/templates/index.ts';
import type { ChatMessage, HfTokenizer } from '../core/tokenizer/hf.ts';
import { observationStopIds } from '../core/tokenizer/tokenizer.ts';
import type { LoadedOnnxModel } from '../model/onnx/load.ts';
import { hfPrompt } from './hf.ts';
import { chatAsTurn } from './local.ts';
import { decodeStream } from './stream.ts';
import { folderTrainedChat, stopAtClose, type TrainedChat } from './trainedChat.ts';

/** What a turn request without a template is rendered with when the folder has no chat template (the local backend's choice). */
const DEFAULT_TEMPLATE = BUILTIN_TEMPLATES[Object.keys(DEFAULT_STAGE_TEMPLATES.eval)[0]];

/** The ids of a turn up to the opening tag of the observation to predict (its own template, else the folder's, else the default), the template's text and the sample's apart. */
function turnIds(tok: HfTokenizer, turn: TurnRequest, folderTemplate?: PromptTemplate): number[] {
  return fitPrompt((parts) => tok.encodeParts(parts), turn.template ?? folderTemplate ?? DEFAULT_TEMPLATE, turn.sample, Number.MAX_SAFE_INTEGER).ids;
}

/** The ids of a request for this folder's tokenizer (the layout in the header comment). */
export function onnxPromptIds(tok: HfTokenizer, hasChatTemplate: boolean, request: GenerateRequest, template?: PromptTemplate): number[] {
  if (isChatRequest(request)) {
    if (!hasChatTemplate) return turnIds(tok, chatAsTurn(request.messages, request.system), template);
    const messages: ChatMessage[] = request.messages.map((x) => ({ role: x.role, content: x.content }));
    if (request.system) messages.unshift({ role: 'system', content: request.system });
    return tok.encodeChat(messages, { addGenerationPrompt: true });
  }
  if (isTurnRequest(request)) {
    if (hasChatTemplate)
      return tok.encodeChat(
        awbMessages(request).map((x) => ({ role: x.role, content: x.content })),
        { addGenerationPrompt: true },
      );
    return turnIds(tok, request, template);
  }
  return tok.encode(request.prompt);
}

/**
 * The ids of a request within `room` tokens: with a chat template, fitted as a Hugging Face folder's
 * are (src/backends/hf.ts's hfPrompt: the oldest earlier turns left out, then the system message
 * cut); without one, by the training policy of the local backend (src/core/templates/fit.ts: earlier
 * turns shortened and left out before the system text); a raw prompt keeps its end.
 */
export function onnxPromptIdsIn(
  m: Pick<LoadedOnnxModel, 'tokenizer' | 'hasChatTemplate' | 'stopIds'> & { template?: PromptTemplate },
  request: GenerateRequest,
  room: number,
  name = 'the model',
  trained: TrainedChat | null = folderTrainedChat(m),
): number[] {
  if (trained && (isChatRequest(request) || isTurnRequest(request))) return trained.prompt(request, room).fitted.ids;
  if (m.hasChatTemplate && m.tokenizer && (isChatRequest(request) || isTurnRequest(request))) return hfPrompt(m.tokenizer, request, room, name).ids;
  if (!m.hasChatTemplate && m.tokenizer && (isChatRequest(request) || isTurnRequest(request))) {
    const tok = m.tokenizer;
    const turn = isTurnRequest(request) ? request : chatAsTurn(request.messages, request.system);
    const template = turn.template ?? m.template ?? DEFAULT_TEMPLATE;
    return fitPrompt((parts) => tok.encodeParts(parts), template, turn.sample, room).ids;
  }
  const ids = onnxPromptIds(m.tokenizer!, m.hasChatTemplate, request, m.template);
  return ids.length > room ? ids.slice(ids.length - room) : ids;
}

export function onnxBackend(m: LoadedOnnxModel, name = `onnx:${m.name}`): LwmBackend {
  const tok = m.tokenizer;
  if (!tok) throw new Error(`${m.name}: has no tokenizer (tokenizer.json), so text cannot be turned into ids`);
  // Our exports' observations end at their closing tag or any token of the turn structure
  // (OBSERVATION_STOP_TOKENS); a pretrained model's at its eos ids.
  const closes = m.hasChatTemplate ? [] : observationStopIds((t) => tok.tokenId(t));
  const stop = new Set([...m.stopIds, ...closes]);
  const trained = folderTrainedChat(m);
  return {
    name,
    async *generate(request: GenerateRequest, o: GenerateOptions) {
      let ids: number[];
      let options = o;
      const room = m.contextLength === null ? Number.MAX_SAFE_INTEGER : m.contextLength - o.maxTokens;
      if (room < 1) throw new RangeError(`${name}: maxTokens ${o.maxTokens} leaves no room for a prompt in ${m.contextLength} tokens`);
      if (trained && (isChatRequest(request) || isTurnRequest(request))) {
        const p = trained.prompt(request, room);
        ids = p.fitted.ids;
        options = stopAtClose(o, p.close);
      } else if (m.contextLength === null) ids = onnxPromptIds(tok, m.hasChatTemplate, request, m.template);
      else ids = onnxPromptIdsIn(m, request, room, name, null);
      const sampling = { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed };
      yield* decodeStream(
        m.decoder.generate(ids, { maxNewTokens: o.maxTokens, sampling, stop: [...stop], signal: o.signal }),
        (x) => tok.decode(x),
        stop,
        options,
      );
    },
  };
}
