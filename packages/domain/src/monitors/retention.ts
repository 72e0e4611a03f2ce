import { sql } from 'kysely';
import type { Db } from '@sdx/db';

/**
 * Retention of monitors' points (MONITOR_RETENTION_DAYS). Points older than the retention go:
 * a month's partition whose whole range is older is dropped at once (no row-by-row delete, no
 * bloat); in the month that straddles the cutoff, the older rows are deleted in batches. Each
 * series' last value (monitor_series) is kept, so the next run still compares with it.
 */

/** Rows per delete statement in the month that straddles the cutoff. */
export const MONITOR_POINTS_PURGE_BATCH = 5000;

/**
 * The retention of a workspace's points, in days: MONITOR_RETENTION_DAYS today. This is the one
 * place a plan's own retention is to be read (plans, extensions-3.md section 2): the purge asks
 * it for the longest retention any workspace has before dropping a whole month, and for each
 * workspace's own before deleting its rows.
 */
export function monitorRetentionDays(defaultDays: number, _workspace?: { id: string }): number {
  return defaultDays;
}

/** The partitions of monitor_points with their upper bounds. */
async function partitions(db: Db): Promise<Array<{ name: string; to: Date }>> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'monitor_points'::regclass
  `.execute(db);
  return rows.flatMap((row) => {
    const match = /TO \('([^']+)'\)/.exec(row.bound);
    return match ? [{ name: row.name, to: new Date(match[1]) }] : [];
  });
}

/** One retention pass of monitors' points as of `now`: partitions dropped, rows deleted. */
export async function purgeMonitorPoints(
  db: Db,
  now: Date,
  defaultDays: number,
  batchSize = MONITOR_POINTS_PURGE_BATCH,
): Promise<{ partitionsDropped: number; pointsDeleted: number }> {
  const days = monitorRetentionDays(defaultDays);
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  let partitionsDropped = 0;
  for (const partition of await partitions(db)) {
    if (partition.to.getTime() <= cutoff.getTime()) {
      await sql`drop table if exists ${sql.table(partition.name)}`.execute(db);
      partitionsDropped += 1;
    }
  }
  let pointsDeleted = 0;
  for (;;) {
    const result = await sql`
      delete from monitor_points where ctid = any(array(
        select ctid from monitor_points where at < ${cutoff} limit ${batchSize}
      ))
    `.execute(db);
    const n = Number(result.numAffectedRows ?? 0n);
    pointsDeleted += n;
    if (n < batchSize) break;
  }
  return { partitionsDropped, pointsDeleted };
}
