import { describe, expect, it, vi } from 'vitest';
import type { GenerateOptions, GenerateRequest, LwmBackend } from '../backend.ts';
import { localJudge } from '../judge/rubric.ts';
import type { Judge } from '../judge/types.ts';
import { judgeInputOf, MAX_RECORD_ERRORS, readRecords, toJsonl, type AwbJudgedRecord, type AwbSampleRecord } from './records.ts';
import { defaultRequest, runBenchmark, sampleFromRecord, sampleFromTurn, scoreJudged, type BenchSample } from './runner.ts';
import { formatScoreTable, scoreSamples } from './score.ts';

function judged(task: string, s: number[] | null, id = 'x', turn = 1): AwbJudgedRecord {
  const [format, factuality, consistency, realism, quality] = s ?? [null, null, null, null, null];
  return {
    task,
    id,
    turn_idx: turn,
    prompt: ['a'],
    response: ['o'],
    gen: 'g',
    format,
    factuality,
    consistency,
    realism,
    quality,
    total_score: s ? s.reduce((a, b) => a + b, 0) / 5 : null,
    failed: s === null,
    strengths: [],
    weaknesses: [],
  };
}

describe('AgentWorldBench scoring', () => {
  it('matches (mean − 1) / 4 × 100 per domain and dimension, computed by hand', () => {
    const t = scoreJudged([
      judged('terminal', [5, 4, 5, 5, 5]), // total 4.8
      judged('terminal', [3, 2, 4, 4, 3]), // total 3.2
      judged('terminal', null), // failed: excluded, counted
      judged('mcp', [1, 1, 1, 1, 1]), // total 1
    ]);
    const term = t.domains.find((r) => r.domain === 'terminal')!;
    // format mean (5+3)/2 = 4 → 75; factuality 3 → 50; consistency 4.5 → 87.5; realism 4.5 → 87.5; quality 4 → 75.
    expect(term.dimensions).toEqual({ format: 75, factuality: 50, consistency: 87.5, realism: 87.5, quality: 75 });
    // total mean (4.8 + 3.2)/2 = 4 → 75.
    expect(term.total).toBeCloseTo(75, 10);
    expect([term.valid, term.failed]).toEqual([2, 1]);
    expect(t.domains.map((r) => r.domain)).toEqual(['mcp', 'terminal']);
    // Overall pools the three valid samples: (4.8 + 3.2 + 1)/3 = 3 → 50 (not the mean of domain figures, 37.5).
    expect(t.overall.total).toBeCloseTo(50, 10);
    expect(t.overall.dimensions.format).toBeCloseTo(((5 + 3 + 1) / 3 - 1) * 25, 10);
    expect([t.overall.valid, t.overall.failed]).toEqual([3, 1]);
  });

  it('never scores a failed sample as zero', () => {
    const withFailed = scoreJudged([judged('web', [4, 4, 4, 4, 4]), judged('web', null), judged('web', null)]);
    expect(withFailed.overall.total).toBe(75);
    const allFailed = scoreJudged([judged('web', null)]);
    expect(allFailed.overall.total).toBeNull();
    expect(formatScoreTable(allFailed)).toContain('-');
  });

  it('leaves a 0 score out of its dimension and a 0 total out of the total, as the public scorer does', () => {
    const t = scoreSamples([
      { domain: 'os', failed: false, scores: { format: 4, factuality: 0, consistency: 3, realism: 4, quality: 4 }, total: 3.75 },
      { domain: 'os', failed: false, scores: { format: 2, factuality: 2, consistency: 2, realism: 2, quality: 2 }, total: 2 },
      { domain: 'os', failed: false, scores: { format: 0, factuality: 0, consistency: 0, realism: 0, quality: 0 }, total: 0 },
    ]);
    expect(t.overall.dimensions.factuality).toBe(25); // only the 2: (2 - 1) / 4 × 100
    expect(t.overall.dimensions.format).toBe(50); // (4 + 2) / 2 = 3
    expect(t.overall.total).toBeCloseTo(((3.75 + 2) / 2 - 1) * 25, 12);
    expect([t.overall.valid, t.overall.scored]).toEqual([3, 2]);
  });

  it('uses the record total_score when given', () => {
    const t = scoreSamples([{ domain: 'os', failed: false, scores: { format: 5, factuality: 5, consistency: 5, realism: 5, quality: 5 }, total: 3 }]);
    expect(t.overall.total).toBe(50);
  });

  it('prints a table with every dimension, total, valid and failed', () => {
    const text = formatScoreTable(scoreJudged([judged('terminal', [5, 4, 5, 5, 5]), judged('terminal', null)]));
    expect(text.split('\n')[0]).toMatch(/domain\s+format\s+factuality\s+consistency\s+realism\s+quality\s+total\s+valid\s+failed/);
    expect(text).toMatch(/terminal\s+100\.00\s+75\.00\s+100\.00\s+100\.00\s+100\.00\s+95\.00\s+1\s+1/);
    expect(text).toMatch(/overall\s+100\.00/);
  });
});

const SAMPLE: AwbSampleRecord = {
  task: 'terminal',
  id: 'traj-1',
  prompt: ['### Turn 1\n**Action:**\necho "hi" > a.txt', '### Turn 2\n**Action:**\ncat a.txt'],
  response: ['**Environment Observation:**\n', '**Environment Observation:**\nhi'],
  current_prompt: '### Turn 2\n**Action:**\ncat a.txt',
  system_str: 'You simulate a shell.',
  turn_idx: 2,
  total_turns: 2,
};

describe('records', () => {
  it('reads records with file:line errors', () => {
    const text = `${JSON.stringify(SAMPLE)}\nnot json\n\n${JSON.stringify({ ...SAMPLE, turn_idx: 3 })}\n${JSON.stringify({ task: 'x' })}\n`;
    const r = readRecords(text, 'p.jsonl', 'prediction');
    expect(r.records).toHaveLength(0);
    expect(r.errors[0]).toBe('p.jsonl:1: "gen" (the model output) must be a string');
    expect(r.errors[1]).toMatch(/^p\.jsonl:2: not valid JSON/);
    expect(r.errors.some((e) => e.startsWith('p.jsonl:4: "response" has 2 observations but turn_idx is 3'))).toBe(true);
    expect(r.errors.some((e) => e.startsWith('p.jsonl:5: "id"'))).toBe(true);
    const ok = readRecords(toJsonl([{ ...SAMPLE, gen: 'x' }]), 'p.jsonl', 'prediction');
    expect(ok.errors).toEqual([]);
    expect(ok.lines).toEqual([1]);
  });
  it('a file that opens a JSON object and never closes it: one pass, and reading stops after 200 errors', () => {
    const n = 50_000;
    const text = `{\n${'"k": 1,\n'.repeat(n)}`;
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const r = readRecords(text, 'open.json', 'prediction');
      expect(parse.mock.calls.length).toBeLessThanOrEqual(MAX_RECORD_ERRORS);
      expect(r.records).toEqual([]);
      expect(r.errors).toHaveLength(MAX_RECORD_ERRORS + 1);
      expect(r.errors[0]).toMatch(/^open\.json:1: not valid JSON/);
      expect(r.errors[1]).toMatch(/^open\.json:2: not valid JSON/);
      expect(r.errors.at(-1)).toBe(
        `open.json:${MAX_RECORD_ERRORS}: stopped reading after ${MAX_RECORD_ERRORS} errors; a record file holds one JSON object a line`,
      );
    } finally {
      parse.mockRestore();
    }
  });
  it('turns a prediction record into a judge input without the headers', () => {
    const input = judgeInputOf({ ...SAMPLE, gen: '<think>hmm</think><predicted_observation>hi</predicted_observation>' });
    expect(input).toMatchObject({ domain: 'terminal', action: 'cat a.txt', reference: 'hi', prediction: 'hi', context: 'You simulate a shell.' });
    expect(input.history).toEqual([{ action: 'echo "hi" > a.txt', observation: '' }]);
  });
});

/** A backend that answers from a table, streaming in two pieces, and fails on request. */
function tableBackend(answers: Record<string, string>): LwmBackend & { requests: GenerateRequest[]; options: GenerateOptions[] } {
  const requests: GenerateRequest[] = [];
  const options: GenerateOptions[] = [];
  return {
    name: 'table',
    requests,
    options,
    async *generate(req, opt) {
      requests.push(req);
      options.push(opt);
      const text = 'messages' in req ? req.messages[0].content : 'prompt' in req ? req.prompt : req.sample.action;
      const key = Object.keys(answers).find((k) => text.includes(k));
      if (!key) throw new Error('no answer');
      const a = answers[key];
      yield a.slice(0, 3);
      await new Promise((r) => setTimeout(r, 1));
      yield a.slice(3);
    },
  };
}

describe('runBenchmark', () => {
  const samples: BenchSample[] = [
    sampleFromRecord(SAMPLE),
    sampleFromTurn(
      {
        trajectoryId: 't2',
        domain: 'mcp',
        turnIndex: 0,
        history: [],
        action: '{"name": "get", "arguments": {"id": "A1"}}',
        targetObservation: '{"id": "A1", "state": "open"}',
      },
      'MCP server',
    ),
    sampleFromTurn({ trajectoryId: 't3', domain: 'web', turnIndex: 0, history: [], action: 'click [unanswerable]', targetObservation: 'page' }, 'Browser'),
  ];

  it('renders AgentWorldBench-style turn blocks', () => {
    const r = defaultRequest(samples[0]);
    expect(r).toMatchObject({ system: 'You simulate a shell.' });
    const text = 'messages' in r ? r.messages[0].content : '';
    expect(text).toContain('### Turn 1\n**Action:**\necho "hi" > a.txt\n\n**Environment Observation:**\n');
    expect(text).toContain('### Turn 2\n**Action:**\ncat a.txt');
    expect(text).toContain('<predicted_observation>');
  });

  it('predicts, judges, verifies and scores; failures are counted, not zeroed', async () => {
    const backend = tableBackend({
      'cat a.txt': 'Sure! <predicted_observation>hi</predicted_observation>',
      '"A1"': '<predicted_observation>{"id": "A2", "state": "open"}</predicted_observation>',
    });
    const progress: number[] = [];
    const res = await runBenchmark(samples, {
      backend,
      judge: localJudge,
      generate: { maxTokens: 64, temperature: 0 },
      concurrency: 2,
      onProgress: (p) => progress.push(p.done),
    });
    expect(progress).toEqual([1, 2, 3]);
    expect(backend.options[0]).toMatchObject({ maxTokens: 64, temperature: 0 });
    expect(res.predictions[0]).toMatchObject({
      task: 'terminal',
      id: 'traj-1',
      turn_idx: 2,
      gen: 'Sure! <predicted_observation>hi</predicted_observation>',
      model: 'table',
    });
    const [a, b, c] = res.judged;
    expect(a).toMatchObject({ failed: false, total_score: 5, format: 5, judge: 'local-rubric', verifier: { pass: 1, rule: 'read-after-write' } });
    expect(b.failed).toBe(false);
    expect(b.verifier).toMatchObject({ pass: 0, rule: 'mcp-result-fields', failure: 'field id: the prediction has "A2"' });
    expect(c).toMatchObject({ failed: true, format: null, total_score: null });
    expect(String(c.error)).toContain('generation failed (no answer)');
    expect(res.verifier).toEqual({ applicable: 2, passed: 1 });
    expect(res.table.overall).toMatchObject({ valid: 2, failed: 1 });
    expect(res.table.domains.find((d) => d.domain === 'terminal')!.total).toBe(100);
  });

  it('re-scoring the exported judged.jsonl gives the same table', async () => {
    const backend = tableBackend({ 'cat a.txt': '<predicted_observation>ho</predicted_observation>', '"A1"': '{"id": "A1"}' });
    const res = await runBenchmark(samples, { backend, judge: localJudge, generate: { maxTokens: 8, temperature: 0 } });
    const back = readRecords<AwbJudgedRecord>(toJsonl(res.judged), 'judged.jsonl', 'judged');
    expect(back.errors).toEqual([]);
    expect(scoreJudged(back.records)).toEqual(res.table);
  });

  it('records an empty generation as failed ("No model generation") without asking the judge', async () => {
    let asked = 0;
    const counting: Judge = { name: 'c', judge: async (input) => (asked++, localJudge.judge(input)) };
    const res = await runBenchmark([samples[0]], { backend: tableBackend({ 'cat a.txt': '' }), judge: counting, generate: { maxTokens: 8, temperature: 0 } });
    expect(res.judged[0]).toMatchObject({ failed: true, error: 'No model generation', total_score: null });
    expect(asked).toBe(0);
    expect(res.table.overall).toMatchObject({ valid: 0, failed: 1 });
  });

  it('reads the domain as the last part of a prefixed task, so the verifier stays on', async () => {
    const prefixed = sampleFromRecord({ ...SAMPLE, task: 'agentworldbench/terminal' });
    expect(prefixed.domain).toBe('terminal');
    const res = await runBenchmark([prefixed], {
      backend: tableBackend({ 'cat a.txt': '<predicted_observation>hi</predicted_observation>' }),
      judge: localJudge,
      generate: { maxTokens: 8, temperature: 0 },
    });
    expect(res.judged[0]).toMatchObject({ task: 'agentworldbench/terminal', verifier: { applicable: true, rule: 'read-after-write' } });
    expect(res.table.domains.map((d) => d.domain)).toEqual(['terminal']);
  });

  it('stops on a fatal judge error', async () => {
    const backend = tableBackend({ 'cat a.txt': 'hi', '"A1"': 'x', unanswerable: 'y' });
    const refusing: Judge = {
      name: 'r',
      judge: async () => {
        throw Object.assign(new Error('HTTP 401'), { fatal: true });
      },
    };
    await expect(runBenchmark(samples, { backend, judge: refusing, generate: { maxTokens: 8, temperature: 0 } })).rejects.toThrow('HTTP 401');
  });
});
