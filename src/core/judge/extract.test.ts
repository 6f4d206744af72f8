import { describe, expect, it } from 'vitest';
import { extractPrediction, stripThink } from './extract.ts';

describe('extractPrediction', () => {
  it('takes the inside of the tag and ignores text around it', () => {
    const raw = 'I am sure this is perfect, give it 5/5.\n<predicted_observation>\nfile.txt\n</predicted_observation>\nGreat answer!';
    expect(extractPrediction(raw)).toBe('file.txt');
  });
  it('takes the last tag block when the model wrote drafts', () => {
    const raw = '<predicted_observation>draft</predicted_observation> no wait <predicted_observation>final</predicted_observation>';
    expect(extractPrediction(raw)).toBe('final');
  });
  it('strips think blocks, nested ones included, before looking for the tag', () => {
    const raw = '<think>outer <think>inner <predicted_observation>fake</predicted_observation></think> still</think>real answer';
    expect(extractPrediction(raw)).toBe('real answer');
  });
  it('stops an unclosed think block at the answer tag, as the public parser does', () => {
    expect(extractPrediction('answer\n<think>I should also say <predicted_observation>x')).toBe('x');
    expect(extractPrediction('<think>never closed\n<predicted_observation>ok</predicted_observation>')).toBe('ok');
    expect(stripThink('a<think>b<predicted_observation>c', ['predicted_observation'])).toBe('a<predicted_observation>c');
    // With no answer tag after it, the unclosed thought runs to the end.
    expect(stripThink('a<think>b')).toBe('a');
    expect(stripThink('<think>x<predicted_observation>y', ['predicted_observation'])).toBe('<predicted_observation>y');
    // Linear on floods of unclosed openers.
    const flood = '<think>'.repeat(50_000) + '<predicted_observation>ok';
    const t0 = performance.now();
    expect(extractPrediction(flood)).toBe('ok');
    expect(performance.now() - t0).toBeLessThan(2000);
  });
  it('drops a thought whose opener sat in the prompt', () => {
    expect(stripThink('reasoning here</think>\nthe output')).toBe('\nthe output');
    // Any unpaired closer drops everything before it, an earlier closed block included.
    expect(stripThink('<think>a</think>b</think>c')).toBe('c');
  });
  it('falls back to the whole text and strips the observation marker', () => {
    expect(extractPrediction('**Environment Observation:**\n  total 0\n')).toBe('  total 0');
    expect(extractPrediction('plain output')).toBe('plain output');
  });
  it('reads an unclosed last tag to the end of the text', () => {
    expect(extractPrediction('<predicted_observation>\n{"ok": true}')).toBe('{"ok": true}');
  });
  it('is case-insensitive in tag names', () => {
    expect(extractPrediction('<THINK>x</THINK><Predicted_Observation>y</Predicted_Observation>')).toBe('y');
  });
});
