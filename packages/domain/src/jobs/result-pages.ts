import { sql } from 'kysely';
import { type Executor, jsonbTexts } from '@sdx/db';
import type { Resources } from '../resources';
import { bucketOf, isResultObjectKey, partOf } from './result-objects';

/**
 * The writing side of result pages, for both stores (results.ts reads them). A page goes in its
 * row (RESULT_STORE=postgres) or, with RESULT_STORE=s3, as an object written BEFORE the row that
 * names it is committed: a crash between the two leaves an object no row names, never a row
 * naming a missing object, and the sweeper (sweepOrphanedObjects) deletes such objects.
 */

/** A page as its row holds it: the items themselves, or the object that holds them. */
export interface PageBody {
  item_count: number;
  items: unknown[] | null;
  object_key: string | null;
  stored_bytes: number | null;
}

type Store = Pick<Resources, 'config' | 'resultObjects'>;

/**
 * The body of a page of `items`, written to the object store first when results go there (an
 * empty page stays an empty row: it holds no result bytes). Throws StoreUnavailable when the
 * store does not answer: the attempt is retried, its job does not fail.
 */
export async function pageBody(services: Store, jobId: string, pageNo: number, items: readonly unknown[]): Promise<PageBody> {
  if (services.config.resultStore !== 's3' || items.length === 0) {
    return { item_count: items.length, items: [...items], object_key: null, stored_bytes: null };
  }
  const { key, bytes } = await bucketOf(services).put(jobId, pageNo, jsonbTexts(items));
  return { item_count: items.length, items: null, object_key: key, stored_bytes: bytes };
}

/**
 * Deletes those of `keys` no row names any more (after a commit that removed or replaced rows
 * naming them; an object shared by several jobs' last pages stays while one of them is kept).
 * Never throws: an object left behind is the sweeper's.
 */
export async function deleteObjectsQuietly(
  services: Pick<Resources, 'db' | 'resultObjects' | 'log'>,
  keys: readonly string[],
): Promise<void> {
  if (keys.length === 0 || !services.resultObjects) return;
  try {
    const named = new Set((await namedKeys(services.db, [...new Set(keys)])).map((row) => row.object_key));
    const unnamed = [...new Set(keys)].filter((key) => !named.has(key));
    if (unnamed.length > 0) await services.resultObjects.delete(unnamed);
  } catch (err) {
    services.log.warn({ err, objects: keys.length }, 'result objects not deleted; the sweeper will');
  }
}

/**
 * Deletes the results of jobs from both stores: their page rows, then the objects those rows
 * named. Returns the number of pages deleted.
 */
export async function deleteJobResults(
  services: Pick<Resources, 'db' | 'resultObjects' | 'log'>,
  jobIds: readonly string[],
): Promise<number> {
  if (jobIds.length === 0) return 0;
  const rows = await services.db
    .deleteFrom('job_result_pages')
    .where('job_id', 'in', [...jobIds])
    .returning('object_key')
    .execute();
  await deleteObjectsQuietly(
    services,
    rows.flatMap((row) => (row.object_key === null ? [] : [row.object_key])),
  );
  return rows.length;
}

/** The kind of the first item of a job's saved pages (a bundle's profile), or null. */
export async function firstSavedKind(services: Pick<Resources, 'db' | 'resultObjects'>, jobId: string): Promise<string | null> {
  const first = await services.db
    .selectFrom('job_result_pages')
    .select(['object_key', 'object_offset', 'stored_bytes', sql<string | null>`items->0->>'kind'`.as('kind')])
    .where('job_id', '=', jobId)
    .where('item_count', '>', 0)
    .orderBy('page_no')
    .limit(1)
    .executeTakeFirst();
  if (!first) return null;
  if (first.object_key === null) return first.kind;
  const [line] = await bucketOf(services).lines(first.object_key, partOf(first));
  return line === undefined ? null : ((JSON.parse(line) as { kind?: string }).kind ?? null);
}

/** Where a sweep stopped: the next one goes on from this key (null: from the start). */
export interface SweepState {
  after: string | null;
}

export interface SweepOutcome {
  listed: number;
  deleted: number;
}

/**
 * Deletes result objects no page row names, older than `graceMs` (so an attempt between writing
 * its object and committing the row is never robbed): objects of attempts that lost their job or
 * crashed, of pages rewritten, of jobs that failed, were cancelled or deleted. Lists at most
 * `maxListings` listing pages (1,000 keys each) a pass, going on from where the last pass stopped,
 * so a large bucket is swept over several passes.
 */
export async function sweepOrphanedObjects(
  services: Pick<Resources, 'db' | 'resultObjects' | 'clock' | 'log'>,
  state: SweepState,
  options: { graceMs?: number; maxListings?: number } = {},
): Promise<SweepOutcome> {
  const outcome: SweepOutcome = { listed: 0, deleted: 0 };
  if (!services.resultObjects) return outcome;
  const graceMs = options.graceMs ?? 3_600_000;
  const before = services.clock.now().getTime() - graceMs;
  let listings = 0;
  let reachedEnd = true;
  for await (const page of services.resultObjects.list(state.after ?? undefined)) {
    outcome.listed += page.length;
    const old = page.filter((o) => o.lastModified.getTime() <= before);
    const candidates = old.filter((o) => isResultObjectKey(o.key)).map((o) => o.key);
    if (candidates.length > 0) {
      const kept = new Set((await namedKeys(services.db, candidates)).map((row) => row.object_key));
      const orphans = candidates.filter((key) => !kept.has(key));
      if (orphans.length > 0) {
        await services.resultObjects.delete(orphans);
        outcome.deleted += orphans.length;
      }
    }
    state.after = page[page.length - 1].key;
    listings += 1;
    if (listings >= (options.maxListings ?? 10)) {
      reachedEnd = false;
      break;
    }
  }
  if (reachedEnd) state.after = null;
  if (outcome.deleted > 0) services.log.info({ deleted: outcome.deleted, listed: outcome.listed }, 'orphaned result objects deleted');
  return outcome;
}

/** Which of `keys` a page row names (job_result_pages_object). */
function namedKeys(db: Executor, keys: readonly string[]) {
  return db
    .selectFrom('job_result_pages')
    .select('object_key')
    .distinct()
    .where('object_key', 'in', [...keys])
    .execute();
}
