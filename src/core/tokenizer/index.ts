// The tokenizer folder's front door: byte-level BPE (tokenizer.ts) and training its merges
// (train.ts). Pretrained models' Hugging Face tokenizers and chat templates are hf.ts, imported
// directly so that only the code reading such a model loads their libraries.
export {
  SPECIAL_TOKENS,
  OBSERVATION_STOP_TOKENS,
  observationStopIds,
  PRETOKENIZE_PATTERN,
  MIN_VOCAB,
  MAX_VOCAB,
  Tokenizer,
  literalRuns,
  type SpecialTokenName,
  type TextPart,
  type TokenizerJSON,
} from './tokenizer.ts';
export { countPretokens, trainBpe, type TrainOptions } from './train.ts';
