// The text stream of a backend's generated ids, shared by the local, Hugging Face and ONNX
// backends: stop ids end it (and are not sent), each new id is counted (onTokens), everything so far
// is decoded and only the new part sent (so multi-byte characters arrive whole), the caller's stop
// strings cut it (a tail that may be the start of one is held back until the next token says, so a
// stop string several tokens long never arrives in part), and a tail that never decoded whole (a
// byte-level model cut mid-character at max tokens) is sent as it is.
import type { GenerateOptions } from '../core/backend.ts';

export async function* decodeStream(
  ids: AsyncIterable<number>,
  decode: (ids: number[]) => string,
  stopIds: ReadonlySet<number>,
  o: Pick<GenerateOptions, 'stop' | 'onTokens'>,
): AsyncGenerator<string> {
  const out: number[] = [];
  let sent = '';
  for await (const id of ids) {
    if (stopIds.has(id)) break;
    out.push(id);
    o.onTokens?.(out.length);
    let full = decode(out);
    if (full.endsWith('\uFFFD')) continue;
    const stopAt = o.stop
      ?.map((s) => full.indexOf(s))
      .filter((i) => i >= 0)
      .sort((a, b) => a - b)[0];
    if (stopAt !== undefined) full = full.slice(0, stopAt);
    const ready = stopAt === undefined ? full.slice(0, full.length - heldBack(full, o.stop)) : full;
    if (ready.length > sent.length) {
      yield ready.slice(sent.length);
      sent = ready;
    }
    if (stopAt !== undefined) return;
  }
  const rest = out.length ? decode(out) : '';
  if (rest.length > sent.length) yield rest.slice(sent.length);
}

/** How many characters at the end of `text` could be the start of a stop string (held back until the next token). */
function heldBack(text: string, stops: readonly string[] | undefined): number {
  let n = 0;
  for (const s of stops ?? []) {
    for (let k = Math.min(s.length - 1, text.length); k > n; k--) {
      if (text.endsWith(s.slice(0, k))) {
        n = k;
        break;
      }
    }
  }
  return n;
}
