// Per-token loss weights aligned with the tokenised observation. Each segment is encoded on its
// own, so a token never straddles the boundary between the context (weight 0) and the target
// observation (its mask weight): alignment is exact by construction, at the cost of the
// tokeniser not merging across that boundary (templates put a newline or tag there anyway).

export interface WeightedSegment {
  text: string;
  weight: number;
  /** The sample's text (an observation): encoded as text, so a special token's string in it is not that token. */
  data?: boolean;
}

export interface WeightedTokens {
  ids: number[];
  /** One weight per id. */
  weights: Float32Array;
}

export function tokenLossWeights(
  tokenizer: { encode(text: string, options?: { allowSpecial?: boolean }): number[] },
  segments: WeightedSegment[],
): WeightedTokens {
  const ids: number[] = [];
  const w: number[] = [];
  for (const s of segments) {
    if (!s.text) continue;
    const part = tokenizer.encode(s.text, { allowSpecial: !s.data });
    for (const id of part) {
      ids.push(id);
      w.push(s.weight);
    }
  }
  return { ids, weights: Float32Array.from(w) };
}
