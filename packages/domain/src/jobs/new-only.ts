import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { type JobRow, jsonRows, type Tx } from '@sdx/db';
import type { Item } from '@sdx/providers';
import { canonicalJson } from '../idempotency/idempotency';
import type { Resources } from '../resources';
import { pageBody } from './result-pages';
import { bucketOf } from './result-objects';

/**
 * What a new_only schedule delivered (extensions.md 10): each schedule's feed keeps the identity
 * hashes of the items its occurrences delivered (tables delivery_sets and delivered_items). The
 * completion of a new_only job (state.ts completeJobs) keeps only the items claimed here.
 */

/**
 * Keeps, of what a new_only schedule's job delivered, only the items no earlier occurrence of
 * its schedule delivered for its target: its items are claimed in the feed's delivered set
 * (delivered_items, by identity hash) in the caller's transaction, its saved pages are cut down
 * to the items it claimed, and it is then completed and billed for those alone (the caller
 * completes it with what this returns). The job row is locked and its lease checked first, so an
 * attempt that lost the job claims nothing (null); a failed or cancelled occurrence never gets
 * here; and of two overlapping occurrences, the second waits on the first's claims and then
 * finds them taken. Pages kept as objects (RESULT_STORE=s3) are read from the bucket and written
 * again cut down, as new objects; `replaced` names the objects the caller deletes after commit.
 */
export async function keepOnlyNew(
  tx: Tx,
  store: Pick<Resources, 'config' | 'resultObjects'>,
  job: Pick<JobRow, 'id' | 'schedule_id' | 'platform' | 'operation' | 'normalized_target'>,
  lease: string,
  final: Page | null,
): Promise<{ total: number; finalPage: Page | null; replaced: string[] } | null> {
  const owned = await tx
    .selectFrom('jobs')
    .select('id')
    .where('id', '=', job.id)
    .where('lease_token', '=', lease)
    .where('status', '=', 'running')
    .forUpdate()
    .executeTakeFirst();
  if (!owned) return null;
  const saved = await tx
    .selectFrom('job_result_pages')
    .select(['page_no', 'items', 'object_key'])
    .where('job_id', '=', job.id)
    .orderBy('page_no')
    .execute();
  const savedItems: Item[][] = [];
  for (const p of saved)
    savedItems.push(
      p.object_key === null ? (p.items as Item[]) : (await bucketOf(store).lines(p.object_key)).map((line) => JSON.parse(line) as Item),
    );
  const pages = [
    ...saved.map((p, k) => ({ pageNo: p.page_no, items: savedItems[k] })),
    ...(final ? [{ pageNo: final.pageNo, items: final.items }] : []),
  ];
  const hashes = pages.map((p) => p.items.map(identityHash));
  const set = await tx
    .insertInto('delivery_sets')
    .values({ schedule_id: job.schedule_id!, platform: job.platform, operation: job.operation, target: job.normalized_target })
    .onConflict((oc) => oc.columns(['schedule_id', 'platform', 'operation', 'target']).doUpdateSet({ target: job.normalized_target }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const unique = [...new Set(hashes.flat())];
  const { rows } =
    unique.length === 0
      ? { rows: [] as Array<{ item_hash: string }> }
      : await sql<{ item_hash: string }>`
          insert into delivered_items (set_id, item_hash)
          select ${set.id}, h from unnest(${unique}::bigint[]) as h
          on conflict do nothing
          returning item_hash::text
        `.execute(tx);
  const claimed = new Set(rows.map((r) => r.item_hash));
  const kept = pages.map((p, k) =>
    p.items.filter((_, i) => {
      const hash = hashes[k][i];
      if (!claimed.has(hash)) return false;
      claimed.delete(hash); // an item repeated within the job is delivered once
      return true;
    }),
  );
  const savedPages = [];
  for (const [k, items] of kept.slice(0, saved.length).entries()) {
    savedPages.push({ page_no: saved[k].page_no, ...(await pageBody(store, job.id, saved[k].page_no, items)) });
  }
  if (savedPages.length > 0) {
    await sql`
      update job_result_pages p set items = v.items, item_count = v.item_count, object_key = v.object_key, object_offset = null, stored_bytes = v.stored_bytes
      from ${jsonRows(savedPages, 'page_no int, item_count int, items jsonb, object_key text, stored_bytes int')} as v
      where p.job_id = ${job.id} and p.page_no = v.page_no
    `.execute(tx);
  }
  const total = kept.reduce((n, items) => n + items.length, 0);
  const finalItems = kept[kept.length - 1];
  const finalBody = final ? await pageBody(store, job.id, final.pageNo, finalItems) : null;
  const object = finalBody?.object_key ? { key: finalBody.object_key, offset: null, bytes: finalBody.stored_bytes! } : null;
  return {
    total,
    finalPage: final ? { pageNo: final.pageNo, items: finalItems, object } : null,
    replaced: saved.flatMap((p) => (p.object_key === null ? [] : [p.object_key])),
  };
}

/** A page of results: its number and its items (and, once written there, its object). */
interface Page {
  pageNo: number;
  items: Item[];
  object?: { key: string; offset: number | null; bytes: number } | null;
}

/** An item's identity as a signed 64-bit hash (decimal text): its ID, or its content when it has none. */
function identityHash(item: Item): string {
  const id = (item as { id?: unknown }).id;
  const identity = typeof id === 'string' || typeof id === 'number' ? `id:${id}` : `content:${canonicalJson(item)}`;
  return BigInt.asIntN(64, createHash('sha256').update(identity).digest().readBigUInt64BE(0)).toString();
}
