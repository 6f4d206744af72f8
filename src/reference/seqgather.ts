// Plain-TypeScript twin of shaders/seqgather.wgsl: per-token values between the row layout
// [S, T] and the packed response layout [S, L]. spans[i] = [start, len] of sequence i.

export interface SeqSpan {
  start: number;
  len: number;
}

export function checkSpans(spans: SeqSpan[], T: number, L: number): void {
  spans.forEach((s, i) => {
    if (!Number.isInteger(s.start) || !Number.isInteger(s.len) || s.start < 0 || s.len < 0)
      throw new RangeError(`seqgather: span ${i} must have non-negative integer start and len`);
    if (s.start + s.len > T) throw new RangeError(`seqgather: span ${i} (${s.start}+${s.len}) runs past T = ${T}`);
    if (s.len > L) throw new RangeError(`seqgather: span ${i} has ${s.len} tokens, more than L = ${L}`);
  });
}

export function seqGatherRef(src: ArrayLike<number>, spans: SeqSpan[], T: number, L: number): Float32Array {
  checkSpans(spans, T, L);
  const out = new Float32Array(spans.length * L);
  spans.forEach((s, i) => {
    for (let t = 0; t < s.len; t++) out[i * L + t] = src[i * T + s.start + t];
  });
  return out;
}

export function seqScatterRef(src: ArrayLike<number>, spans: SeqSpan[], T: number, L: number): Float32Array {
  checkSpans(spans, T, L);
  const out = new Float32Array(spans.length * T);
  spans.forEach((s, i) => {
    for (let t = 0; t < s.len; t++) out[i * T + s.start + t] = src[i * L + t];
  });
  return out;
}
