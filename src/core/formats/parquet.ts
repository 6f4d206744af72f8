// Parquet output for the exports verl reads (verl loads its datasets with pandas.read_parquet).
// Rows are plain objects; their columns are declared with a small field grammar that maps onto
// the Parquet types pyarrow writes for the same Python values: strings → UTF8 byte arrays,
// integers → INT64, floats → DOUBLE, lists → the three-level LIST (`list` / `element`), objects
// → groups (structs). The bytes are written by hyparquet-writer.
import { parquetWriteBuffer } from 'hyparquet-writer';

export type ParquetField = 'string' | 'int64' | 'double' | { list: ParquetField } | { struct: Record<string, ParquetField> };

/** A top-level column: its name and type, in output order. */
export type ParquetColumns = Record<string, ParquetField>;

interface SchemaElement {
  name: string;
  type?: 'BYTE_ARRAY' | 'INT64' | 'DOUBLE';
  converted_type?: 'UTF8' | 'LIST';
  logical_type?: { type: 'STRING' | 'LIST' };
  repetition_type?: 'OPTIONAL' | 'REPEATED' | 'REQUIRED';
  num_children?: number;
}

function elements(name: string, f: ParquetField): SchemaElement[] {
  if (f === 'string') return [{ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' }];
  if (f === 'int64') return [{ name, type: 'INT64', repetition_type: 'OPTIONAL' }];
  if (f === 'double') return [{ name, type: 'DOUBLE', repetition_type: 'OPTIONAL' }];
  if ('list' in f) {
    return [
      { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      ...elements('element', f.list),
    ];
  }
  const children = Object.entries(f.struct);
  return [{ name, repetition_type: 'OPTIONAL', num_children: children.length }, ...children.flatMap(([k, v]) => elements(k, v))];
}

/** The Parquet schema (root first, depth-first) for the columns. */
export function parquetSchema(columns: ParquetColumns): SchemaElement[] {
  const entries = Object.entries(columns);
  return [{ name: 'schema', repetition_type: 'REQUIRED', num_children: entries.length }, ...entries.flatMap(([k, v]) => elements(k, v))];
}

/** INT64 values go to the writer as bigint; everything else as the row holds it. */
function convert(value: unknown, f: ParquetField, where: string): unknown {
  if (value === undefined || value === null) return null;
  if (f === 'string') {
    if (typeof value !== 'string') throw new Error(`${where}: expected a string, got ${typeof value}`);
    return value;
  }
  if (f === 'int64') {
    if (!Number.isSafeInteger(value)) throw new Error(`${where}: expected an integer, got ${JSON.stringify(value)}`);
    return BigInt(value as number);
  }
  if (f === 'double') {
    if (typeof value !== 'number') throw new Error(`${where}: expected a number, got ${typeof value}`);
    return value;
  }
  if ('list' in f) {
    if (!Array.isArray(value)) throw new Error(`${where}: expected a list`);
    return value.map((v, i) => convert(v, f.list, `${where}[${i}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: expected an object`);
  const extra = Object.keys(value).filter((k) => !Object.hasOwn(f.struct, k));
  if (extra.length) throw new Error(`${where}: field ${extra[0]} is not in the declared schema`);
  const out: Record<string, unknown> = {};
  for (const [k, sub] of Object.entries(f.struct)) out[k] = convert((value as Record<string, unknown>)[k], sub, `${where}.${k}`);
  return out;
}

/** Writes rows as one Parquet file; every key of a row must be declared in `columns`. */
export function writeParquet(rows: readonly Record<string, unknown>[], columns: ParquetColumns, kvMetadata?: Record<string, string>): Uint8Array {
  for (let i = 0; i < rows.length; i++) {
    const extra = Object.keys(rows[i]).filter((k) => !Object.hasOwn(columns, k));
    if (extra.length) throw new Error(`row ${i}: column ${extra[0]} is not in the declared schema`);
  }
  const columnData = Object.entries(columns).map(([name, f]) => ({
    name,
    data: rows.map((r, i) => convert(r[name], f, `row ${i}: ${name}`)),
  }));
  const buffer = parquetWriteBuffer({
    columnData,
    schema: parquetSchema(columns) as Parameters<typeof parquetWriteBuffer>[0]['schema'],
    ...(kvMetadata ? { kvMetadata: Object.entries(kvMetadata).map(([key, value]) => ({ key, value })) } : {}),
    createdBy: 'lwm-studio',
  });
  return new Uint8Array(buffer);
}
