import { type RawBuilder, sql } from 'kysely';

/**
 * Many rows as one value: a relation read from a single JSON parameter with
 * jsonb_to_recordset, for a statement that would otherwise carry a VALUES list with one
 * parameter per cell. Building, sending and parsing one JSON text costs the service and
 * Postgres far less than hundreds of parameters, and the statement's text no longer depends on
 * the number of rows.
 *
 * `columns` declares each column's name and type (`'id text, total int, items jsonb'`); a key
 * that a row lacks reads as null, a key not declared is ignored. Values are converted from
 * their JSON form as Postgres reads the type's text input (a Date is written as its ISO time),
 * so the same rules apply as to parameters. Use as a relation: `from ${jsonRows(rows, '...')} as v`.
 */
export function jsonRows(rows: ReadonlyArray<Record<string, unknown>>, columns: string): RawBuilder<unknown> {
  if (!/^\s*[a-z_][a-z0-9_]*\s+[a-z][a-z0-9_ ]*(\[\])?(\s*,\s*[a-z_][a-z0-9_]*\s+[a-z][a-z0-9_ ]*(\[\])?)*\s*$/.test(columns)) {
    throw new Error(`jsonRows: not a column list: ${columns}`);
  }
  return sql`(select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(${sql.raw(columns)}))`;
}
