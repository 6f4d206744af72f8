// The local WebGPU model as an LwmBackend: text in, streamed text out, through the model's own
// tokenizer and the KV-cache generator. Chat requests are laid out in the turn structure the
// model was trained on (system, then action/observation turns), ending at the opening tag of the
// predicted observation.
import { SPECIAL_TOKENS, type Tokenizer } from '../core/tokenizer/index.ts';
import type { GpuGenerator } from '../model/generate.ts';
import { turnPromptText } from '../core/bench/awb-layout.ts';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { isChatRequest, isTurnRequest, type GenerateOptions, type GenerateRequest, type LwmBackend } from '../core/backend.ts';

function chatToPrompt(r: Extract<GenerateRequest, { messages: unknown }>): string {
  const S = SPECIAL_TOKENS;
  let text = `${S.system}\n${r.system}\n`;
  for (const m of r.messages) text += m.role === 'user' ? `${S.action}\n${m.content}\n` : `${S.observation}\n${m.content}\n${S.endTurn}\n`;
  return `${text}${S.observation}\n${S.predictedOpen}\n`;
}

export function localBackend(gen: GpuGenerator, tok: Tokenizer, name = 'local'): LwmBackend {
  return {
    name,
    async *generate(request: GenerateRequest, o: GenerateOptions) {
      const text = isTurnRequest(request) ? turnPromptText(request, request.template ?? BUILTIN_TEMPLATES.v0) : isChatRequest(request) ? chatToPrompt(request) : request.prompt;
      let ids = tok.encode(text, { allowSpecial: true });
      const room = gen.limits.maxLength - o.maxTokens;
      if (room < 1) throw new RangeError(`local backend: maxTokens ${o.maxTokens} leaves no room for a prompt in ${gen.limits.maxLength} tokens`);
      if (ids.length > room) ids = ids.slice(ids.length - room); // keep the end: the current action
      const out: number[] = [];
      let sent = '';
      for await (const id of gen.generate(ids, {
        maxNewTokens: o.maxTokens,
        sampling: { temperature: o.temperature, topK: o.topK, topP: o.topP, seed: o.seed },
        stop: [tok.special.eos, tok.special.predictedClose],
        signal: o.signal,
      })) {
        if (id === tok.special.eos || id === tok.special.predictedClose) break;
        out.push(id);
        // Decode everything so far and send the new part, so multi-byte characters arrive whole.
        let full = tok.decode(out);
        if (full.endsWith('\uFFFD')) continue;
        const stopAt = o.stop?.map((s) => full.indexOf(s)).filter((i) => i >= 0).sort((a, b) => a - b)[0];
        if (stopAt !== undefined) full = full.slice(0, stopAt);
        if (full.length > sent.length) {
          yield full.slice(sent.length);
          sent = full;
        }
        if (stopAt !== undefined) return;
      }
    },
  };
}
