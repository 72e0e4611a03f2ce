import { type OrderByDirection, type SelectQueryBuilder, sql } from 'kysely';
import type { Database, Executor } from '@sdx/db';
import type { Tenant } from './resources';
import { RequestValidationError } from './errors';

/**
 * Keyset paging of the lists (GET /v1/jobs, /v1/batches, /v1/schedules; extensions.md 7).
 * IDs are time-ordered (ids.ts), so "newest first" is `order by id desc` and the page after
 * `starting_after` is `id < starting_after`: each page is read off an index that ends in
 * `id desc`, as fast for the thousandth page as for the first, and a row added meanwhile never
 * shifts a page. A page reads one row more than it answers, to know whether another follows.
 */
export interface PageRequest {
  limit: number;
  /** The last ID of the previous page; null for the first page. */
  startingAfter: string | null;
}

export interface Page<T> {
  rows: T[];
  /** The ID the next page starts after; null when this page is the last. */
  next: string | null;
}

type Listed = 'jobs' | 'batches' | 'schedules' | 'monitors';

/**
 * A page query of the tenant's rows: `workspace_id` in the tenant's workspace, after
 * `starting_after`, ordered by (workspace_id, id desc), one row more than the page.
 *
 * The workspace is matched as `= any(array[id])` and is part of the order on purpose. Written as
 * a plain `workspace_id = id`, the planner takes the workspace as a constant, drops it from the
 * order, and may then read the primary key backwards and filter by workspace whenever the
 * workspace holds most of the table: its page is then found only after every newer row of
 * every other workspace (100,000 rows read for 26 in a measured case). Kept in the order, only
 * the indexes that begin with workspace_id give the order without a sort, and every list index
 * does (migration 0016), so the page is read off one of them.
 */
export function pageQuery<T extends Listed, O>(
  query: SelectQueryBuilder<Database, T, O>,
  tenant: Tenant,
  page: PageRequest,
): SelectQueryBuilder<Database, T, O> {
  let q = query.where(sql<boolean>`workspace_id = any(${[tenant.workspace.id]}::text[])`);
  if (page.startingAfter !== null) q = q.where(sql<boolean>`id < ${page.startingAfter}`);
  const newestFirst: OrderByDirection = 'desc';
  return q
    .orderBy(sql`workspace_id`)
    .orderBy(sql`id`, newestFirst)
    .limit(page.limit + 1);
}

/** The page of `limit` rows out of `rows`, read with a limit of `limit + 1`. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: page[page.length - 1].id };
}

const NOUN: Record<Listed, string> = { jobs: 'job', batches: 'batch', schedules: 'schedule', monitors: 'monitor' };

/**
 * Checks that `starting_after` names a row of the tenant's workspace (a deleted schedule still
 * does: it keeps its place in the list). Another workspace's ID, an unknown one or one of
 * another kind is a 422 validation error on `["query", "starting_after"]`: a position the
 * client cannot have been given, answered as clearly as a malformed one.
 */
export async function checkStartingAfter(db: Executor, tenant: Tenant, table: Listed, page: PageRequest): Promise<void> {
  if (page.startingAfter === null) return;
  const found = await db
    .selectFrom(table)
    .select('id')
    .where('id', '=', page.startingAfter)
    .where('workspace_id', '=', tenant.workspace.id)
    .executeTakeFirst();
  if (found) return;
  throw new RequestValidationError([
    {
      loc: ['query', 'starting_after'],
      msg: `No ${NOUN[table]} ${page.startingAfter} in this workspace to start after`,
      type: 'value_error',
      input: page.startingAfter,
    },
  ]);
}
