// The quota rule (quota.ts): warn when a job's expected write does not fit, or when under 10% of
// the quota is free; never without an estimate.
import { describe, expect, it } from 'vitest';
import { paramCount, presetConfig } from '../core/model/config.ts';
import { formatBytes, MIN_FREE_FRACTION, quotaWarning, trainWriteBytes } from './quota.ts';

const MiB = 1024 * 1024;
const job = (bytes: number) => ({ what: 'this training run', bytes });

describe('quotaWarning', () => {
  it('stays quiet with room to spare, and without an estimate or a quota', () => {
    expect(quotaWarning({ usage: 100 * MiB, quota: 1000 * MiB }, job(50 * MiB))).toBeNull();
    expect(quotaWarning(null, job(50 * MiB))).toBeNull();
    expect(quotaWarning({ usage: 0, quota: 0 }, job(50 * MiB))).toBeNull();
  });

  it('warns when the job is expected to write more than is free', () => {
    const w = quotaWarning({ usage: 700 * MiB, quota: 1000 * MiB }, job(400 * MiB));
    expect(w).toMatchObject({ reason: 'job', free: 300 * MiB, expectedBytes: 400 * MiB });
    expect(w?.message).toBe(
      'Browser storage is nearly full: 300 MiB free of 1000 MiB (30%), and this training run is expected to write about 400 MiB. When storage fills, the job stops with what it saved so far; nothing stored before is lost.',
    );
  });

  it('warns when under 10% of the quota is free, whatever the job writes', () => {
    const quota = 1000 * MiB;
    expect(quotaWarning({ usage: quota * (1 - MIN_FREE_FRACTION), quota }, job(0))).toBeNull();
    const w = quotaWarning({ usage: 950 * MiB, quota }, { what: 'this bench', bytes: 0 });
    expect(w?.reason).toBe('low');
    expect(w?.message).toContain('50.0 MiB free of 1000 MiB (5%). This bench may stop when it fills');
    // Usage above the quota (a browser's estimate can overshoot) reads as nothing free.
    expect(quotaWarning({ usage: 2 * quota, quota }, job(1))?.free).toBe(0);
  });
});

describe('trainWriteBytes', () => {
  it('three checkpoints of weights and two Adam moments in float32', () => {
    expect(trainWriteBytes('micro')).toBe(36 * paramCount(presetConfig('micro')));
    expect(trainWriteBytes('quick', 1024)).toBe(36 * paramCount(presetConfig('quick', { vocabSize: 1024 })));
  });
});

describe('formatBytes', () => {
  it('B, KiB, MiB, GiB', () => {
    expect([0, 1023, 1024, 1536, 12.5 * MiB, 3 * 1024 * MiB].map(formatBytes)).toEqual(['0 B', '1023 B', '1.00 KiB', '1.50 KiB', '12.5 MiB', '3.00 GiB']);
  });
});
