// Our own format: one trajectory per JSONL line, or a JSON array / single object of them.
import { validateTrajectory } from '../schema/validate.ts';
import type { Trajectory } from '../schema/types.ts';
import { isObject, type FormatImporter } from './types.ts';

export const nativeImporter: FormatImporter = {
  name: 'native',
  detect(r) {
    return isObject(r) && Array.isArray(r.turns) && isObject(r.system_prompt) ? 10 : isObject(r) && Array.isArray(r.turns) ? 3 : 0;
  },
  session(ctx) {
    return {
      add(record, at) {
        const errors = validateTrajectory(record);
        if (errors.length) return { trajectories: [], errors };
        const t = record as Trajectory;
        const out: Trajectory = { ...t };
        if (ctx.domainOverride) out.domain = ctx.domainOverride;
        // A trajectory that says where it came from keeps that; otherwise it came from here.
        if (!out.source) out.source = { format: 'native', ...(ctx.file ? { file: ctx.file } : {}), line: at.line };
        return { trajectories: [out], errors: [] };
      },
      finish: () => ({ trajectories: [], errors: [] }),
    };
  },
};
