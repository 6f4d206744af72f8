export interface BenchRecord {
  suite: string;
  case: string;
  engine: string;
  metric: string;
  value: number | null;
  unit: string;
  [key: string]: unknown;
}
export function parseRecords(text: string, suite: string): { records: BenchRecord[]; errors: string[] };
export function appendRecords(out: string, records: BenchRecord[], extra?: Record<string, unknown>): BenchRecord[];
export function speedupRecords(records: BenchRecord[], runId: string): BenchRecord[];
