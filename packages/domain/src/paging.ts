import type { Executor } from '@sdx/db';
import type { Tenant } from './context';
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

/** The page of `limit` rows out of `rows`, read with a limit of `limit + 1`. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  if (rows.length <= limit) return { rows, next: null };
  const page = rows.slice(0, limit);
  return { rows: page, next: page[page.length - 1]!.id };
}

type Listed = 'jobs' | 'batches' | 'schedules';

const NOUN: Record<Listed, string> = { jobs: 'job', batches: 'batch', schedules: 'schedule' };

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
