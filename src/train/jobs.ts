// The job kinds a JobHost runs. Each runner takes its spec and a JobContext.
import { runSelfTest } from '../gpu/selftest.ts';
import type { JobRunner } from './host.ts';

export interface SelfTestSpec {
  kind: 'selftest';
}

export const JOB_RUNNERS: Record<string, JobRunner> = {
  /** The kernel self-test, run where training runs: proves the worker owns a working device. */
  selftest: async (_spec, ctx) => {
    const results = await runSelfTest(ctx.rt, (r) => ctx.log(`${r.pass ? 'pass' : 'FAIL'} ${r.name}: ${r.detail}`));
    return { passed: results.filter((r) => r.pass).length, total: results.length, results };
  },
};
