// AgentWorldBench records (docs/method.md §8): one JSON object per turn,
// `{task, id, prompt: [actions], response: [observations], current_prompt, system_str, turn_idx, total_turns}`.
// The record for turn k carries the whole history up to k, so the records of one trajectory
// merge back into it; headers the benchmark puts around actions and observations are removed.
import type { AwbRecord, AwbSampleRecord } from '../schema/agentworldbench.ts';
import { schemaErrors } from '../schema/validate.ts';
import { joinPointer } from '../schema/locate.ts';
import { domainOfTask, type Trajectory, type Turn } from '../schema/types.ts';
import { systemPromptFromText, systemPromptToText } from './systemPromptText.ts';
import { isObject, type FormatImporter, type RecordError, type SessionContext, type SessionOutput } from './types.ts';

// The exact layout our exporter writes; tried first so export→import is exact.
export const decorateAction = (action: string, k: number): string => `### Turn ${k}\n**Action:**\n${action}`;
export const decorateObservation = (obs: string): string => `**Environment Observation:**\n${obs}`;

// Looser forms seen in hand-edited or older files: any heading level, optional colons, and a
// space instead of the newline after the marker.
const TURN_HEADER = /^\s*#{1,6}[ \t]*Turn[ \t]+\d+[ \t]*:?[ \t]*\r?\n/i;
const ACTION_HEADER = /^\s*\*\*Action:?\*\*:?[ \t]*(?:\r?\n)?/i;
const OBSERVATION_HEADER = /^\s*\*\*Environment Observation:?\*\*:?[ \t]*(?:\r?\n)?/i;

export function cleanAction(text: string, k: number): string {
  const canonical = `### Turn ${k}\n**Action:**\n`;
  if (text.startsWith(canonical)) return text.slice(canonical.length);
  return text.replace(TURN_HEADER, '').replace(ACTION_HEADER, '');
}

export function cleanObservation(text: string): string {
  const canonical = '**Environment Observation:**\n';
  if (text.startsWith(canonical)) return text.slice(canonical.length);
  return text.replace(TURN_HEADER, '').replace(OBSERVATION_HEADER, '');
}

/** `abc_t3` / `abc-turn3` / `abc#turn_3` for turn 3 → `abc`; any other id is its own stem. */
export function idStem(id: string, turnIdx: number): { stem: string; stemmed: boolean } {
  const m = /^(.+?)[_\-:#.](?:t|turn)[_-]?(\d+)$/i.exec(id);
  if (m && Number(m[2]) === turnIdx) return { stem: m[1], stemmed: true };
  return { stem: id, stemmed: false };
}

interface Group {
  key: string;
  id: string;
  stemmed: boolean;
  task?: string;
  systemStr?: string;
  total?: number;
  totalLine?: number;
  actions: (string | undefined)[];
  observations: (string | undefined)[];
  /** Line of the record that set each action / observation, for conflict messages. */
  actionLines: number[];
  observationLines: number[];
  records: Map<number, { line: number; record: AwbRecord }>;
  firstLine: number;
}

/** The trajectory a group's records make: its turns in order, up to the first one without an observation. */
function trajectoryOf(g: Group, ctx: SessionContext): SessionOutput {
  const errors: RecordError[] = [];
  const turns: Turn[] = [];
  for (let i = 0; i < g.actions.length; i++) {
    const action = g.actions[i];
    const observation = g.observations[i];
    if (action === undefined) break; // unreachable: the longest record carries every earlier action
    if (observation === undefined) {
      errors.push({
        pointer: '/response',
        line: g.actionLines[i],
        message: `no observation for turn ${i + 1} of trajectory "${g.id}" in any of its records; the turn is left out`,
      });
      break;
    }
    turns.push({ action, observation });
  }
  if (!turns.length) return { trajectories: [], errors };
  const indices = [...g.records.keys()].sort((a, b) => a - b);
  const complete = g.total === turns.length && indices.length === turns.length;
  const t: Trajectory = {
    id: g.id,
    // The domain is the task's last '/'-part, as the public scorer reads it (`agentworldbench/terminal`).
    domain: ctx.domainOverride ?? ((g.task ? domainOfTask(g.task) : '') || ctx.fallbackDomain),
    system_prompt: systemPromptFromText(g.systemStr ?? ''),
    turns,
    source: {
      format: 'agentworldbench',
      ...(ctx.file ? { file: ctx.file } : {}),
      line: g.firstLine,
      ...(ctx.keepRaw ? { raw: indices.map((k) => g.records.get(k)!.record) } : {}),
    },
  };
  // Benchmark files often hold only some turns of a trajectory; say which, so nothing is lost.
  if (!complete) t.metadata = { agentworldbench: { total_turns: g.total ?? turns.length, turn_indices: indices } };
  return { trajectories: [t], errors };
}

/** A record's actions and observations with the benchmark's headers removed, or why they do not fit its turn_idx. */
function recordTurns(r: AwbRecord): { actions: string[]; observations: string[] } | RecordError {
  const k = r.turn_idx;
  const actions = r.prompt.map((p, i) => cleanAction(p, i + 1));
  if (actions.length === k - 1 && typeof r.current_prompt === 'string') actions.push(cleanAction(r.current_prompt, k));
  if (actions.length !== k) {
    return { pointer: '/prompt', message: `turn_idx is ${k}, so prompt must hold ${k} actions (or ${k - 1} plus current_prompt), got ${r.prompt.length}` };
  }
  if (r.response.length !== k && r.response.length !== k - 1) {
    return {
      pointer: '/response',
      message: `turn_idx is ${k}, so response must hold ${k} observations (or ${k - 1} without the reference), got ${r.response.length}`,
    };
  }
  if (r.total_turns !== undefined && r.total_turns < k) {
    return { pointer: '/total_turns', message: `total_turns ${r.total_turns} is smaller than turn_idx ${k}` };
  }
  return { actions, observations: r.response.map(cleanObservation) };
}

/** Fills the group's turns from one record; returns the places where the record disagrees with earlier ones. */
function mergeRecord(g: Group, r: AwbRecord, actions: string[], observations: string[], line: number): RecordError[] {
  const errors: RecordError[] = [];
  if ((r.system_str ?? '') !== (g.systemStr ?? '')) {
    errors.push({ pointer: '/system_str', message: `differs from the system_str of trajectory "${g.id}" on line ${g.firstLine}` });
  }
  actions.forEach((a, i) => {
    if (g.actions[i] === undefined) {
      g.actions[i] = a;
      g.actionLines[i] = line;
    } else if (g.actions[i] !== a) {
      errors.push({
        pointer: joinPointer('/prompt', i),
        message: `action of turn ${i + 1} differs from the one given on line ${g.actionLines[i]} for the same trajectory "${g.id}"`,
      });
    }
  });
  observations.forEach((o, i) => {
    if (g.observations[i] === undefined) {
      g.observations[i] = o;
      g.observationLines[i] = line;
    } else if (g.observations[i] !== o) {
      errors.push({
        pointer: joinPointer('/response', i),
        message: `observation of turn ${i + 1} differs from the one given on line ${g.observationLines[i]} for the same trajectory "${g.id}"`,
      });
    }
  });
  if (r.total_turns !== undefined) {
    if (g.total !== undefined && g.total !== r.total_turns) {
      errors.push({ pointer: '/total_turns', message: `is ${r.total_turns}, but line ${g.totalLine} said ${g.total} for the same trajectory "${g.id}"` });
    } else {
      g.total = r.total_turns;
      g.totalLine = line;
    }
  }
  g.records.set(r.turn_idx, { line, record: r });
  return errors;
}

const historyKey = (task: string | undefined, sys: string | undefined, first: string) => `${task ?? ''}\u0000${sys ?? ''}\u0000${first}`;

/** The open groups of a session, by key (task and id stem) and by history (task, system text, first action). */
class Groups {
  readonly byKey = new Map<string, Group>();
  private readonly byHistory = new Map<string, Group[]>();

  drop(g: Group) {
    this.byKey.delete(g.key);
    const hk = historyKey(g.task, g.systemStr, g.actions[0] ?? '');
    const list = this.byHistory.get(hk);
    if (list) {
      const i = list.indexOf(g);
      if (i >= 0) list.splice(i, 1);
      if (!list.length) this.byHistory.delete(hk);
    }
  }

  /** Every open group, oldest first, and the index emptied. */
  takeAll(): Group[] {
    const rest = [...this.byKey.values()].sort((a, b) => a.firstLine - b.firstLine);
    this.byKey.clear();
    this.byHistory.clear();
    return rest;
  }

  /** The group a record belongs to: by id stem, else (ids unrelated) by agreeing history; opened when there is none. */
  groupOf(r: AwbRecord, key: string, id: { stem: string; stemmed: boolean }, actions: string[], observations: string[], line: number): Group {
    const k = r.turn_idx;
    let g = this.byKey.get(key);
    if (!g && !id.stemmed) {
      // Records with unrelated ids still belong together when their histories agree.
      const candidates = this.byHistory.get(historyKey(r.task, r.system_str, actions[0])) ?? [];
      g = candidates.find(
        (c) =>
          !c.stemmed &&
          !c.records.has(k) &&
          actions.every((a, i) => c.actions[i] === undefined || c.actions[i] === a) &&
          observations.every((o, i) => c.observations[i] === undefined || c.observations[i] === o),
      );
    }
    if (g) return g;
    g = {
      key,
      id: id.stem,
      stemmed: id.stemmed,
      task: r.task,
      systemStr: r.system_str,
      actions: [],
      observations: [],
      actionLines: [],
      observationLines: [],
      records: new Map(),
      firstLine: line,
    };
    this.byKey.set(key, g);
    const hk = historyKey(r.task, r.system_str, actions[0]);
    this.byHistory.set(hk, [...(this.byHistory.get(hk) ?? []), g]);
    return g;
  }
}

function session(ctx: SessionContext) {
  const groups = new Groups();

  return {
    add(raw: unknown, at: { line: number }): SessionOutput {
      const schema = schemaErrors('agentworldbench', raw);
      if (schema.length) return { trajectories: [], errors: schema };
      const r = raw as AwbRecord;
      const k = r.turn_idx;
      const turns = recordTurns(r);
      if ('pointer' in turns) return { trajectories: [], errors: [turns] };
      const { actions, observations } = turns;
      const id = idStem(String(r.id), k);
      const key = `${r.task ?? ''}\u0000${id.stem}`;
      const same = groups.byKey.get(key);
      if (same?.records.has(k)) {
        return {
          trajectories: [],
          errors: [
            { pointer: '/turn_idx', message: `a second record for turn ${k} of trajectory "${id.stem}" (the first is on line ${same.records.get(k)!.line})` },
          ],
        };
      }
      const g = groups.groupOf(r, key, id, actions, observations, at.line);
      const errors = mergeRecord(g, r, actions, observations, at.line);
      // Emit as soon as every turn is in, so a large file does not keep finished trajectories.
      if (g.total !== undefined && g.records.size === g.total && g.actions.length === g.total && g.observations.length === g.total) {
        groups.drop(g);
        const out = trajectoryOf(g, ctx);
        return { trajectories: out.trajectories, errors: [...errors, ...out.errors] };
      }
      return { trajectories: [], errors };
    },
    finish(): SessionOutput {
      const rest = groups.takeAll();
      const out: SessionOutput = { trajectories: [], errors: [] };
      for (const g of rest) {
        const o = trajectoryOf(g, ctx);
        out.trajectories.push(...o.trajectories);
        out.errors.push(...o.errors);
      }
      return out;
    },
  };
}

export const agentWorldBenchImporter: FormatImporter = {
  name: 'agentworldbench',
  detect(r) {
    if (!isObject(r)) return 0;
    if ('turn_idx' in r && ('prompt' in r || 'response' in r)) return 10;
    return 'system_str' in r && 'prompt' in r ? 6 : 0;
  },
  session,
};

/**
 * AgentWorldBench records of one trajectory, one per turn. A trajectory imported from
 * AgentWorldBench and not changed since is written back as its original records; otherwise the
 * records are built in the layout cleanAction/cleanObservation undo exactly.
 */
export function toAgentWorldBenchRecords(t: Trajectory): AwbSampleRecord[] {
  const raw = t.source?.format === 'agentworldbench' ? t.source.raw : undefined;
  if (Array.isArray(raw) && raw.length && rawStillMatches(t, raw)) return raw as AwbSampleRecord[];
  const actions = t.turns.map((turn, i) => decorateAction(turn.action, i + 1));
  const observations = t.turns.map((turn) => decorateObservation(turn.observation));
  const system = systemPromptToText(t.system_prompt);
  return t.turns.map((_, i) => ({
    task: t.domain,
    id: `${t.id}_t${i + 1}`,
    prompt: actions.slice(0, i + 1),
    response: observations.slice(0, i + 1),
    current_prompt: actions[i],
    system_str: system,
    turn_idx: i + 1,
    total_turns: t.turns.length,
  }));
}

function rawStillMatches(t: Trajectory, raw: unknown[]): boolean {
  const s = session({ keepRaw: false, fallbackDomain: t.domain });
  const got: Trajectory[] = [];
  let bad = false;
  raw.forEach((r, i) => {
    const o = s.add(r, { line: i + 1 });
    got.push(...o.trajectories);
    bad ||= o.errors.length > 0;
  });
  const f = s.finish();
  got.push(...f.trajectories);
  if (bad || f.errors.length || got.length !== 1) return false;
  const back = got[0];
  return (
    back.id === t.id &&
    back.domain === t.domain &&
    JSON.stringify(back.system_prompt) === JSON.stringify(t.system_prompt) &&
    back.turns.length === t.turns.length &&
    back.turns.every((turn, i) => turn.action === t.turns[i].action && turn.observation === t.turns[i].observation && !t.turns[i].metadata)
  );
}
