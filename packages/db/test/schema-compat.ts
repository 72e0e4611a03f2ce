/**
 * Expand and contract (docs/deployment.md): the schema after this checkout's migrations must
 * still serve the previous release's code, which runs beside it during a rolling upgrade. The
 * checker compares two snapshots of the public schema, the one the previous release's
 * migrations produced and the one after every migration, and reports what the previous
 * release could meet broken:
 *
 * - a table or view gone (dropped, or renamed: a new one with the same columns);
 * - a column gone (dropped, or renamed: a new column of the same table and type);
 * - a column whose type changed;
 * - a column the previous release may leave out of its inserts that now refuses that: a new
 *   NOT NULL column without a default on an existing table, or an existing column made NOT NULL
 *   without a default.
 *
 * A removal is allowed only once it is listed in CONTRACTED, with the release that contracts
 * it and why no running code reads it any more.
 */
import { sql } from 'kysely';
import type { Db } from '@sdx/db';

export interface ColumnShape {
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface TableShape {
  kind: 'table' | 'view';
  columns: Record<string, ColumnShape>;
}

export type SchemaSnapshot = Record<string, TableShape>;

export interface Contracted {
  /** The release that removes it (its CHANGELOG.md entry says so too). */
  release: string;
  table: string;
  /** Absent: the whole table. */
  column?: string;
  /** Why no code of the previous release reads or writes it any more. */
  reason: string;
}

/**
 * Tables and columns removed on purpose: each was no longer read nor written by the release
 * before the one named (the contract step of expand and contract). Empty so far: no migration
 * has removed a table or column since v1.0.0.
 */
export const CONTRACTED: readonly Contracted[] = [];

export type FindingKind =
  | 'table-removed'
  | 'table-renamed'
  | 'column-removed'
  | 'column-renamed'
  | 'column-type-changed'
  | 'column-now-required'
  | 'new-required-column';

export interface Finding {
  kind: FindingKind;
  table: string;
  column?: string;
  detail: string;
}

/** The public schema's tables, views and columns (the migrator's own tables left out). */
export async function snapshotSchema(db: Db): Promise<SchemaSnapshot> {
  const { rows } = await sql<{
    table_name: string;
    table_type: string;
    column_name: string;
    data_type: string;
    udt_name: string;
    is_nullable: string;
    column_default: string | null;
    is_identity: string;
    is_generated: string;
  }>`
    select c.table_name, t.table_type, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.column_default, c.is_identity, c.is_generated
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = 'public' and c.table_name not like 'kysely\\_%'
    order by c.table_name, c.ordinal_position`.execute(db);
  const snapshot: SchemaSnapshot = {};
  for (const row of rows) {
    const table = (snapshot[row.table_name] ??= { kind: row.table_type === 'VIEW' ? 'view' : 'table', columns: {} });
    table.columns[row.column_name] = {
      type: row.data_type === 'ARRAY' || row.data_type === 'USER-DEFINED' ? row.udt_name : row.data_type,
      nullable: row.is_nullable === 'YES',
      hasDefault: row.column_default !== null || row.is_identity === 'YES' || row.is_generated === 'ALWAYS',
    };
  }
  return snapshot;
}

const sameColumns = (a: TableShape, b: TableShape) => {
  const left = Object.keys(a.columns).sort();
  const right = Object.keys(b.columns).sort();
  return left.length === right.length && left.every((name, i) => name === right[i] && a.columns[name].type === b.columns[name].type);
};

/** What the previous release could meet broken in `next`; allowed removals left out. */
export function compareSchemas(previous: SchemaSnapshot, next: SchemaSnapshot, contracted: readonly Contracted[] = CONTRACTED): Finding[] {
  const allowed = (table: string, column?: string) =>
    contracted.some((c) => c.table === table && (c.column === undefined || c.column === column));
  const findings: Finding[] = [];
  const newTables = Object.keys(next).filter((name) => !(name in previous));
  for (const [table, before] of Object.entries(previous)) {
    const after = next[table];
    if (!after) {
      if (allowed(table)) continue;
      const renamed = newTables.find((name) => sameColumns(before, next[name]));
      findings.push(
        renamed
          ? {
              kind: 'table-renamed',
              table,
              detail: `${before.kind} ${table} is gone and ${renamed} has its columns: renamed? The previous release still reads ${table}`,
            }
          : { kind: 'table-removed', table, detail: `${before.kind} ${table} is gone: the previous release still reads it` },
      );
      continue;
    }
    const added = Object.keys(after.columns).filter((name) => !(name in before.columns));
    const renameTargets = new Set<string>();
    for (const [column, shape] of Object.entries(before.columns)) {
      const now = after.columns[column];
      if (!now) {
        if (allowed(table, column)) continue;
        const renamed = added.find((name) => !renameTargets.has(name) && after.columns[name].type === shape.type);
        if (renamed) renameTargets.add(renamed);
        findings.push(
          renamed
            ? {
                kind: 'column-renamed',
                table,
                column,
                detail: `${table}.${column} is gone and ${table}.${renamed} (${shape.type}) is new: renamed? The previous release still reads ${column}`,
              }
            : { kind: 'column-removed', table, column, detail: `${table}.${column} is gone: the previous release still reads it` },
        );
        continue;
      }
      if (now.type !== shape.type && !allowed(table, column))
        findings.push({ kind: 'column-type-changed', table, column, detail: `${table}.${column} was ${shape.type} and is ${now.type}` });
      if (before.kind === 'table' && shape.nullable && !now.nullable && !now.hasDefault && !allowed(table, column)) {
        findings.push({
          kind: 'column-now-required',
          table,
          column,
          detail: `${table}.${column} is now NOT NULL without a default: the previous release's inserts may leave it out`,
        });
      }
    }
    if (before.kind !== 'table') continue;
    for (const column of added) {
      if (renameTargets.has(column)) continue;
      const shape = after.columns[column];
      if (!shape.nullable && !shape.hasDefault && !allowed(table, column)) {
        findings.push({
          kind: 'new-required-column',
          table,
          column,
          detail: `${table}.${column} is new, NOT NULL and without a default: the previous release's inserts into ${table} do not set it`,
        });
      }
    }
  }
  return findings;
}
