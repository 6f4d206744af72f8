// Trajectory-to-turn expansion (docs/method.md §3): turn samples (expand.ts), the train/eval split by
// trajectory and the RL pool of one turn per trajectory (split.ts). This file is the front door.
export { seededRandom, hashString, keyedUniform } from '../random.ts';
export { turnSample, expandTurns, type TurnSample } from './expand.ts';
export {
  splitByTrajectory,
  interleaveDomains,
  interleaveSamples,
  rlPool,
  summarizeExpansion,
  type SplitOptions,
  type Split,
  type ExpansionSummary,
} from './split.ts';
