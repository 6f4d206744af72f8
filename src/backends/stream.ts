// The text stream of a backend's generated ids, shared by the local, Hugging Face and ONNX
// backends: stop ids end it (and are not sent), each new id is counted (onTokens), everything so far
// is decoded and only the new part sent (so multi-byte characters arrive whole), the caller's stop
// strings cut it, and a tail that never decoded whole (a byte-level model cut mid-character at max
// tokens) is sent as it is.
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
    const stopAt = o.stop?.map((s) => full.indexOf(s)).filter((i) => i >= 0).sort((a, b) => a - b)[0];
    if (stopAt !== undefined) full = full.slice(0, stopAt);
    if (full.length > sent.length) {
      yield full.slice(sent.length);
      sent = full;
    }
    if (stopAt !== undefined) return;
  }
  const rest = out.length ? decode(out) : '';
  if (rest.length > sent.length) yield rest.slice(sent.length);
}
