// The endpoint layout of a turn is the same whether the turn comes as an AgentWorldBench record
// (its own texts, sent unchanged) or as structure (laid out as the AgentWorldBench export does).
import { describe, expect, it } from 'vitest';
import { generateTrajectories } from '../../envs/generate.ts';
import { toAgentWorldBenchRecords } from '../formats/agentworldbench.ts';
import { systemPromptToText } from '../formats/systemPromptText.ts';
import { expandTurns } from '../turns/index.ts';
import { awbMessages, turnRequestFromRecord } from './awbLayout.ts';
import type { AwbSampleRecord } from './records.ts';
import { sampleFromTurn, turnRequestOf } from './runner.ts';

describe('AgentWorldBench message layout', () => {
  it('gives the same messages for a native turn and for its exported record', () => {
    const [t] = generateTrajectories('terminal', 1, 4);
    const records = toAgentWorldBenchRecords(t) as AwbSampleRecord[];
    expandTurns([t]).forEach((turn, i) => {
      const fromRecord = turnRequestFromRecord(records[i]);
      const fromTurn = turnRequestOf(sampleFromTurn(turn, systemPromptToText(t.system_prompt)));
      expect(awbMessages(fromTurn)).toEqual(awbMessages(fromRecord));
      expect(fromRecord.sample).toEqual(fromTurn.sample);
      expect(fromRecord.reference).toBe(turn.targetObservation);
      const m = awbMessages(fromRecord);
      expect(m.map((x) => x.role)).toEqual(['system', ...Array(i).fill(['user', 'assistant']).flat(), 'user']);
      expect(m[m.length - 1].content).toBe(`### Turn ${i + 1}\n**Action:**\n${turn.action}`);
    });
  });
});
