// What every importer implements, so the streaming driver in ./import.ts can run any of them.
import type { Trajectory } from '../schema/types.ts';

export const FORMAT_NAMES = ['native', 'agentworldbench', 'openai', 'sharegpt', 'agentinstruct'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** A problem with one record; the driver adds file and line. */
export interface RecordError {
  pointer: string;
  message: string;
  /** Set when the error concerns an earlier record than the one being added. */
  line?: number;
}

export interface RecordLocation {
  /** Line where the record starts. */
  line: number;
  /** 0-based position of the record in the input. */
  index: number;
}

export interface SessionContext {
  file?: string;
  /** Keep the source record(s) in `trajectory.source.raw`. */
  keepRaw: boolean;
  /** Domain for records that do not name one (from the options or the file name). */
  fallbackDomain: string;
  /** Domain forced by the caller, overriding what the records say. */
  domainOverride?: string;
}

export interface SessionOutput {
  trajectories: Trajectory[];
  errors: RecordError[];
}

/** One import run of one format. Sessions may hold records back (AgentWorldBench merges turns). */
export interface ImportSession {
  add(record: unknown, at: RecordLocation): SessionOutput;
  finish(): SessionOutput;
}

export interface FormatImporter {
  name: FormatName;
  /** How sure this importer is that `record` is its format: 0 not at all, higher is surer. */
  detect(record: unknown): number;
  session(ctx: SessionContext): ImportSession;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
