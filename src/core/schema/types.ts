// The Unified Environment Trajectory Schema (docs/method.md §2): system_prompt ⊕ [turn_1 … turn_T].
// These types are shared by every importer, environment, view and trainer. The JSON Schema
// that validates them lives beside this file.

/** The seven domains of AgentWorldBench. Imported data may carry other domain names. */
export const DOMAINS = ['mcp', 'search', 'terminal', 'swe', 'android', 'web', 'os'] as const;
export type KnownDomain = (typeof DOMAINS)[number];

/**
 * The domain named by an AgentWorldBench `task` field: its last '/'-separated part, as the
 * public scorer reads it (`agentworldbench/terminal` is `terminal`).
 */
export function domainOfTask(task: string): string {
  const slash = task.lastIndexOf('/');
  return slash < 0 ? task : task.slice(slash + 1);
}

/** The five system-prompt fields, in the order a template renders them by default. */
export const SYSTEM_PROMPT_FIELDS = ['task_description', 'action_space', 'initial_state', 'demonstrations', 'simulation_instruction'] as const;
export type SystemPromptField = (typeof SYSTEM_PROMPT_FIELDS)[number];

/**
 * The task context c. All five fields are always present (possibly empty). When an imported
 * prompt cannot be split into the five fields, the fields are empty and `text` holds it whole;
 * templates render `text` verbatim in that case.
 */
export type SystemPrompt = Record<SystemPromptField, string> & { text?: string };

/** docs/method.md §8 content classes of an observation. */
export type SpanKind = 'deterministic' | 'pre_existing' | 'runtime_metadata';
export const SPAN_KINDS: readonly SpanKind[] = ['deterministic', 'pre_existing', 'runtime_metadata'];

/**
 * A labelled region of an observation: [start, end) in UTF-16 code units of the observation
 * string (JavaScript string indices). Built-in environments emit spans that tile the whole
 * observation with no gaps or overlaps.
 */
export interface SpanLabel {
  start: number;
  end: number;
  kind: SpanKind;
}

export interface TurnMetadata {
  /** ISO-8601 time of the observation, when the source has one. */
  timestamp?: string;
  /** Content classes of the observation (docs/method.md §8). */
  spans?: SpanLabel[];
  /** Where this turn came from, when it differs from the trajectory's source. */
  source?: string;
  /**
   * A loss weight in [0, 1] fixed by the source (e.g. AgentInstruct's per-turn `loss` flag:
   * true → 1, false → 0). When present it overrides the mask category's ratio.
   */
  loss_weight_override?: number;
  /** Anything else the source carried. */
  [key: string]: unknown;
}

/** One step: the agent's action and the environment's observation that followed it. */
export interface Turn {
  action: string;
  observation: string;
  metadata?: TurnMetadata;
}

export interface TrajectorySource {
  /** Format it was imported from ('native', 'agentworldbench', 'openai', 'sharegpt', 'agentinstruct', 'env'). */
  format: string;
  /** File name it was read from, when imported from a file. */
  file?: string;
  /** 1-based line (JSONL) or record index where it started. */
  line?: number;
  /** The raw record(s) as read, kept so nothing the source said is lost. */
  raw?: unknown;
}

export interface Trajectory {
  id: string;
  domain: string;
  system_prompt: SystemPrompt;
  turns: Turn[];
  source?: TrajectorySource;
  metadata?: Record<string, unknown>;
}

export function emptySystemPrompt(): SystemPrompt {
  return { task_description: '', action_space: '', initial_state: '', demonstrations: '', simulation_instruction: '' };
}
