// Judged records as the scores judge agreement compares (src/core/judge/agree.ts): `lwm agree`
// and the Bench view read records through this one rule, so they agree on the same files.
import type { JudgedScore } from '../judge/agree.ts';
import { isFailedRecord, sampleKey, type AwbJudgedRecord } from './records.ts';

/**
 * A judged record's score for agreement, or null when it has none: failed as the public scorer
 * reads it (a missing or non-zero "failed"), or a total of 0 or none.
 */
export function agreementScore(rec: AwbJudgedRecord, judge: string, model: string): JudgedScore | null {
  if (isFailedRecord(rec) || typeof rec.total_score !== 'number' || rec.total_score === 0) return null;
  return { judge, model, key: sampleKey(rec), score: rec.total_score };
}
