// Trajectory-to-turn expansion (docs/method.md §3): sample t of a trajectory is its context (system prompt,
// turns before t, action t) and the target observation o_t.
import type { SpanLabel, SystemPrompt, Trajectory, Turn } from '../schema/types.ts';

/** Sample t of a trajectory: context (system prompt, turns before t, action t) and target o_t. */
export interface TurnSample {
  trajectoryId: string;
  domain: string;
  /** 0-based index of the target turn in its trajectory. */
  turnIndex: number;
  systemPrompt: SystemPrompt;
  /** Turns 0 … turnIndex-1, shared with the trajectory (not copied). */
  history: Turn[];
  action: string;
  targetObservation: string;
  /** Span labels of the target observation, when the source had them. */
  targetSpans?: SpanLabel[];
  /** The target turn's metadata (loss_weight_override, timestamp, ...). */
  targetMetadata?: Turn['metadata'];
}

export function turnSample(t: Trajectory, i: number): TurnSample {
  const turn = t.turns[i];
  const s: TurnSample = {
    trajectoryId: t.id,
    domain: t.domain,
    turnIndex: i,
    systemPrompt: t.system_prompt,
    history: t.turns.slice(0, i),
    action: turn.action,
    targetObservation: turn.observation,
  };
  if (turn.metadata?.spans) s.targetSpans = turn.metadata.spans;
  if (turn.metadata) s.targetMetadata = turn.metadata;
  return s;
}

/** Every turn of every trajectory as a sample, in trajectory then turn order. */
export function expandTurns(trajectories: Iterable<Trajectory>): TurnSample[] {
  const out: TurnSample[] = [];
  for (const t of trajectories) for (let i = 0; i < t.turns.length; i++) out.push(turnSample(t, i));
  return out;
}
