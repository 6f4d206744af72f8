import { describe, expect, it } from 'vitest';
import { localJudge, RUBRIC_WEIGHTS, rubricJudge, rubricJudgeDetailed, toScale } from './rubric.ts';
import { randomText } from './ladder.ts';
import { seededRandom } from '../turns/index.ts';
import type { JudgeInput } from './types.ts';

const LS_REF =
  'total 12\n-rw-r--r-- 1 user user  220 Jan  4 10:12 .bashrc\n-rw-r--r-- 1 user user 1024 Jan  4 10:15 notes.txt\ndrwxr-xr-x 2 user user 4096 Jan  4 10:16 src';

function input(prediction: string, reference: string, extra: Partial<JudgeInput> = {}): JudgeInput {
  return { domain: 'terminal', history: [], action: 'ls -la', prediction, reference, ...extra };
}

const MCP_REF = '{\n  "id": 17,\n  "name": "alice",\n  "balance": 250.75,\n  "created": "2023-01-04",\n  "tier": "gold"\n}';
const MCP_WRONG = '{\n  "id": 42,\n  "name": "bob",\n  "balance": 13.5,\n  "created": "2021-07-30",\n  "tier": "silver"\n}';

describe('local rubric judge on hand-made pairs', () => {
  it('identical → all 5', () => {
    for (const ref of [LS_REF, MCP_REF, '', 'ok']) {
      expect(rubricJudge(input(ref, ref)).scores).toEqual({ format: 5, factuality: 5, consistency: 5, realism: 5, quality: 5 });
    }
  });

  it('identical up to trailing whitespace and CRLF → all 5', () => {
    expect(rubricJudge(input(LS_REF.replace(/\n/g, '\r\n') + '\n\n', LS_REF)).total).toBe(5);
  });

  it('empty → all 1', () => {
    for (const pred of ['', '   \n  ']) {
      const v = rubricJudge(input(pred, LS_REF));
      expect(v.scores).toEqual({ format: 1, factuality: 1, consistency: 1, realism: 1, quality: 1 });
      expect(v.weaknesses.join(' ')).toContain('empty');
    }
  });

  it('right structure with wrong facts → high Format, low Factuality (JSON)', () => {
    const v = rubricJudge(input(MCP_WRONG, MCP_REF, { domain: 'mcp', action: '{"name": "get_user", "arguments": {"user": "alice"}}' }));
    expect(v.scores.format).toBeGreaterThanOrEqual(4);
    expect(v.scores.factuality).toBeLessThanOrEqual(2);
    expect(v.weaknesses.join(' ')).toMatch(/field values? differ/);
  });

  it('two of three fields wrong caps Factuality at 2 even when the echoed id is right', () => {
    const v = rubricJudge(input('{"user_id": 7, "name": "Bob", "plan": "free"}', '{"user_id": 7, "name": "Ann", "plan": "pro"}', { domain: 'mcp' }));
    expect(v.scores.format).toBe(5);
    expect(v.scores.factuality).toBeLessThanOrEqual(2);
    expect(v.weaknesses.join(' ')).toContain('2 field values differ');
    const oneWrong = rubricJudge(input('{"a": 1, "b": 2, "c": 3, "d": 4, "e": 9}', '{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}', { domain: 'mcp' }));
    expect(oneWrong.scores.factuality).toBe(4);
  });

  it('right structure with wrong facts → high Format, low Factuality (text listing)', () => {
    const wrong =
      'total 40\n-rw-r--r-- 1 root root  981 Mar  9 08:01 .profile\n-rw-r--r-- 1 root root 7777 Mar  9 08:02 todo.md\ndrwxr-xr-x 2 root root 4096 Mar  9 08:03 lib';
    const v = rubricJudge(input(wrong, LS_REF));
    expect(v.scores.format).toBeGreaterThanOrEqual(4);
    expect(v.scores.factuality).toBeLessThanOrEqual(2);
  });

  it('contradicting an earlier turn → low Consistency', () => {
    const history = [{ action: 'cat config.ini', observation: 'port = 8080\nhost = localhost\ndebug = false' }];
    const ref = 'port = 8080';
    const consistent = rubricJudge(input('port = 8080', ref, { history, action: 'grep port config.ini' }));
    const contradicting = rubricJudge(input('port = 9090', ref, { history, action: 'grep port config.ini' }));
    expect(consistent.scores.consistency).toBe(5);
    expect(contradicting.scores.consistency).toBeLessThanOrEqual(2);
    expect(contradicting.weaknesses.join(' ')).toContain('earlier turns');
  });

  it('a value the real environment changed too is not a contradiction', () => {
    const history = [{ action: 'cat state', observation: 'count = 1' }];
    const v = rubricJudge(input('count = 2', 'count = 2', { history, action: 'incr && cat state' }));
    expect(v.scores.consistency).toBe(5);
  });

  it('degenerate repetition → low Realism and Quality', () => {
    const looped = Array.from({ length: 40 }, () => '-rw-r--r-- 1 user user  220 Jan  4 10:12 .bashrc').join('\n');
    const v = rubricJudge(input(looped, LS_REF));
    expect(v.scores.realism).toBeLessThanOrEqual(2);
    expect(v.scores.quality).toBeLessThanOrEqual(2);
    expect(v.weaknesses).toContain('degenerate repetition');
    const stutter = rubricJudge(input('total 12 ' + 'src '.repeat(30), LS_REF));
    expect(stutter.scores.realism).toBeLessThanOrEqual(2);
  });

  it('repetition the real output also has is not penalised', () => {
    const ref = Array.from({ length: 10 }, () => 'ping: 64 bytes from 10.0.0.1').join('\n');
    expect(rubricJudge(input(ref + '\n' + 'ping: 64 bytes from 10.0.0.1', ref)).scores.realism).toBe(5);
  });

  it('a near miss scores between the extremes and ranks above a wrong answer', () => {
    const near = LS_REF.replace('1024', '1025');
    const wrong = 'bash: ls: command not found';
    const a = rubricJudge(input(near, LS_REF));
    const b = rubricJudge(input(wrong, LS_REF));
    expect(a.total).toBeGreaterThan(b.total);
    expect(a.scores.format).toBe(5);
    expect(a.scores.factuality).toBeGreaterThanOrEqual(4);
  });

  it('meta talk and placeholders cost realism', () => {
    const v = rubricJudge(input('Here is the simulated output: [insert file list]', LS_REF));
    expect(v.scores.realism).toBeLessThanOrEqual(2);
  });

  it('a prediction that breaks a deterministic span loses factuality, runtime metadata does not count', () => {
    const ref = 'Started job 4242 at 10:00:01\nresult: 7';
    const spans = [
      { start: 0, end: 12, kind: 'deterministic' as const },
      { start: 12, end: 28, kind: 'runtime_metadata' as const },
      { start: 28, end: ref.length, kind: 'deterministic' as const },
    ];
    const otherPid = rubricJudge(input('Started job 1111 at 09:59:59\nresult: 7', ref, { spans }));
    const wrongResult = rubricJudge(input('Started job 4242 at 10:00:01\nresult: 8', ref, { spans }));
    expect(otherPid.scores.factuality).toBeGreaterThanOrEqual(4);
    expect(wrongResult.scores.factuality).toBeLessThanOrEqual(2);
    expect(wrongResult.weaknesses.join(' ')).toContain('deterministic content differs');
  });

  it('applies span offsets to the raw reference, before leading blank lines are trimmed', () => {
    const ref = '\n'.repeat(9) + 'PID 4242 ok';
    const pid = ref.indexOf('4242');
    const spans = [{ start: pid, end: pid + 4, kind: 'runtime_metadata' as const }];
    expect(rubricJudge(input('PID 1111 ok', ref, { spans })).scores.factuality).toBe(5);
  });

  it('is deterministic and exposes its features', async () => {
    const a = rubricJudgeDetailed(input(MCP_WRONG, MCP_REF));
    const b = rubricJudgeDetailed(input(MCP_WRONG, MCP_REF));
    expect(a).toEqual(b);
    expect(a.features.jsonKeyJaccard).toBe(1);
    expect(await localJudge.judge(input(MCP_WRONG, MCP_REF))).toEqual(a.verdict);
  });

  it('maps 0–1 to the scale at the documented thresholds', () => {
    expect([0, 0.19, 0.2, 0.45, 0.7, 0.9, 1].map(toScale)).toEqual([1, 1, 2, 3, 4, 5, 5]);
  });
});

describe('local rubric judge: content over shape', () => {
  const pct = (total: number) => ((total - 1) / 4) * 100;

  it('random text in the reference layout gets Realism 1 and scores under 25', () => {
    const rand = seededRandom(3);
    const garbage = randomText(LS_REF, rand);
    const v = rubricJudge(input(garbage, LS_REF));
    expect(v.scores.realism).toBe(1);
    expect(pct(v.total)).toBeLessThan(25);
  });

  it('the reference shape with other words and numbers does not pay', () => {
    // Every letter and digit replaced, layout, punctuation and line count kept.
    const copy = LS_REF.replace(/[a-z]/g, (ch) => String.fromCharCode(((ch.charCodeAt(0) - 97 + 7) % 26) + 97)).replace(/\d/g, (d) =>
      String((Number(d) + 3) % 10),
    );
    const v = rubricJudge(input(copy, LS_REF));
    expect(v.scores.format).toBeGreaterThanOrEqual(4);
    expect(pct(v.total)).toBeLessThan(25);
  });

  it('text the context already showed is nearly free; the turn’s new content is the fact', () => {
    const history = [{ action: 'cd reports', observation: 'dev@box:~/reports$' }];
    const ref = 'alpha beta gamma delta\ndev@box:~/reports$';
    const spans = [{ start: 0, end: ref.length, kind: 'deterministic' as const }];
    const promptOnly = rubricJudgeDetailed(input('dev@box:~/reports$', ref, { history, action: 'cat notes.txt', spans }));
    expect(promptOnly.features.recall).toBeLessThan(0.2);
    expect(promptOnly.verdict.scores.factuality).toBe(1);
  });

  it('runtime metadata is never a fact to reproduce, pre-existing content counts at half weight', () => {
    const ref = 'Job 4242 started\nowner alice';
    const spans = [
      { start: 0, end: 4, kind: 'deterministic' as const },
      { start: 4, end: 8, kind: 'runtime_metadata' as const },
      { start: 8, end: 23, kind: 'deterministic' as const },
      { start: 23, end: ref.length, kind: 'pre_existing' as const },
    ];
    const otherPid = rubricJudgeDetailed(input('Job 1717 started\nowner alice', ref, { spans }));
    const otherOwner = rubricJudgeDetailed(input('Job 4242 started\nowner bruno', ref, { spans }));
    expect(otherPid.features.recall).toBe(1);
    expect(otherOwner.features.recall).toBeLessThan(1);
    expect(otherOwner.features.recall).toBeGreaterThan(0.5);
  });

  it('invented words cost Consistency, repeating the session does not contradict it', () => {
    const history = [{ action: 'ls', observation: 'notes.txt todo.txt' }];
    const ref = 'notes.txt report.md';
    const stale = rubricJudgeDetailed(input('notes.txt todo.txt', ref, { history, action: 'ls' }));
    const invented = rubricJudgeDetailed(input('notes.txt zebra.cfg', ref, { history, action: 'ls' }));
    expect(stale.features.invented).toBe(0);
    expect(invented.features.invented).toBeGreaterThan(0);
    expect(stale.verdict.scores.consistency).toBeGreaterThan(invented.verdict.scores.consistency);
  });

  it('Realism needs evidence from the reference or the session', () => {
    for (const pred of ['total 12\n-rw-r--r-- 1 root root 99 Feb  1 01:01 a.cfg', MCP_WRONG]) {
      const v = rubricJudge(input(pred, LS_REF));
      expect(v.scores.realism).toBeLessThanOrEqual(Math.floor((v.scores.factuality + v.scores.consistency) / 2) + RUBRIC_WEIGHTS.realism.aboveGrounding);
    }
  });

  it('field names of a JSON reference are structure: the same fields with other values score Factuality 1', () => {
    const ref = '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\\"title\\":\\"Budget\\",\\"total\\":915}"}]}}';
    const other = '{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"{\\"title\\":\\"Garden\\",\\"total\\":12}"}]}}';
    const spans = [{ start: 0, end: ref.length, kind: 'deterministic' as const }];
    const v = rubricJudgeDetailed(input(other, ref, { domain: 'mcp', spans }));
    expect(v.verdict.scores.format).toBe(5);
    expect(v.verdict.scores.factuality).toBe(1);
  });

  it('keeps every weight in one table', () => {
    expect(Object.keys(RUBRIC_WEIGHTS)).toEqual(['format', 'factuality', 'consistency', 'realism', 'quality']);
  });
});
