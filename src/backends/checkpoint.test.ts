import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../core/templates/index.ts';
import { CheckpointError } from '../core/model/checkpoint.ts';
import { checkpointTokenizer, trainedTemplates } from './checkpoint.ts';

describe('trainedTemplates', () => {
  it('is v0 for a checkpoint without a spec or with an unreadable one', () => {
    expect(trainedTemplates({}).trained).toBe('v0');
    expect(trainedTemplates({ extraMetadata: { spec: '{not json' } }).trained).toBe('v0');
  });

  it("is the heaviest version of the stage's mix, ties broken by name", () => {
    expect(trainedTemplates({ extraMetadata: { spec: JSON.stringify({ templates: { v0: 0.2, v2: 0.5, v1: 0.3 } }) } }).trained).toBe('v2');
    expect(trainedTemplates({ extraMetadata: { spec: JSON.stringify({ templates: { v2: 0.5, v1: 0.5 } }) } }).trained).toBe('v1');
  });

  it("knows the run's own versions beside the built-in ones, and skips a mix entry it cannot render", () => {
    const mine = { ...BUILTIN_TEMPLATES.v1, version: 'mine' };
    const t = trainedTemplates({ extraMetadata: { spec: JSON.stringify({ templates: { ghost: 0.9, mine: 0.1 }, templateSet: { mine } }) } });
    expect(t.trained).toBe('mine');
    expect(t.templates.mine.version).toBe('mine');
    expect(t.templates.v0).toEqual(BUILTIN_TEMPLATES.v0);
  });
});

describe('checkpointTokenizer', () => {
  it('names the source when the checkpoint carries no tokenizer or a broken one', () => {
    expect(() => checkpointTokenizer({}, 'run-1/last')).toThrow(CheckpointError);
    expect(() => checkpointTokenizer({}, 'run-1/last')).toThrow(/run-1\/last: the checkpoint holds no tokenizer/);
    expect(() => checkpointTokenizer({ extraMetadata: { tokenizer: '{' } }, 'x.safetensors')).toThrow(
      /x.safetensors: the checkpoint's tokenizer cannot be read/,
    );
  });
});
