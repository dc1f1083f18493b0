/**
 * Reading the service's Parquet answers back in tests (src/testing/: not part of the build), with DuckDB (its Node
 * package, the reader a user would take): the rows as the NDJSON stream writes them (timestamps in UTC RFC 3339 with
 * milliseconds, decimals in canonical text, sequences as numbers), the footer's key-value metadata, the row groups
 * and the schema as DuckDB sees it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

export interface ParquetAnswer {
  rows: Record<string, string | number>[];
  /** Every value as DuckDB writes it as text (exact: sequences above 2^53 too). */
  texts: Record<string, string>[];
  metadata: Record<string, string>;
  rowGroups: number;
  /** Column name → DuckDB's type (e.g. `TIMESTAMP WITH TIME ZONE`, `DECIMAL(38,18)`, `UBIGINT`, `VARCHAR`). */
  types: Record<string, string>;
  /** Column name → the encodings of its chunk in each row group, as the footer lists them (`PLAIN, RLE`, …). */
  encodings: Record<string, string[]>;
}

/** A decimal's text without trailing fractional zeros (and without a bare point), as the service writes it. */
export function canonicalDecimal(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

export async function readParquet(bytes: Buffer): Promise<ParquetAnswer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'dg-parquet-'));
  const file = path.join(dir, 'answer.parquet');
  writeFileSync(file, bytes);
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    await db.run(`SET TimeZone = 'UTC'`);
    const source = `read_parquet('${file}')`;
    const described = (await db.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowObjectsJson();
    const types = Object.fromEntries(described.map((r) => [String(r.column_name), String(r.column_type)]));
    const select = Object.entries(types).map(([name, type]) =>
      type.startsWith('TIMESTAMP')
        ? `strftime("${name}", '%Y-%m-%dT%H:%M:%S.%gZ') AS "${name}"`
        : `CAST("${name}" AS VARCHAR) AS "${name}"`,
    );
    // (DuckDB's SQL, reading a Parquet answer in a test: not the ClickHouse layer the lint rule keeps SQL in.)
    // eslint-disable-next-line no-restricted-syntax
    const query = `SELECT ${select.join(', ')} FROM ${source}`;
    const raw = select.length === 0 ? [] : (await db.runAndReadAll(query)).getRowObjectsJson();
    const rows = raw.map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([name, value]) => {
          const type = types[name] ?? '';
          const text = String(value);
          if (type.startsWith('DECIMAL')) return [name, canonicalDecimal(text)];
          if (type === 'UBIGINT') return [name, Number(text)];
          return [name, text];
        }),
      ),
    );
    // eslint-disable-next-line no-restricted-syntax
    const kvQuery = `SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${file}') ORDER BY k`;
    const kv = (await db.runAndReadAll(kvQuery)).getRowObjectsJson();
    // eslint-disable-next-line no-restricted-syntax
    const groupsQuery = `SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata('${file}')`;
    const groups = (await db.runAndReadAll(groupsQuery)).getRowObjectsJson();
    // eslint-disable-next-line no-restricted-syntax
    const chunksQuery = `SELECT path_in_schema AS c, encodings AS e FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`;
    const encodings: Record<string, string[]> = {};
    for (const r of (await db.runAndReadAll(chunksQuery)).getRowObjectsJson()) {
      (encodings[String(r.c)] ??= []).push(String(r.e));
    }
    return {
      rows,
      texts: raw.map((r) => Object.fromEntries(Object.entries(r).map(([name, value]) => [name, String(value)]))),
      metadata: Object.fromEntries(kv.map((r) => [String(r.k), String(r.v)])),
      rowGroups: Number(groups[0]?.n ?? 0),
      types,
      encodings,
    };
  } finally {
    db.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}
