import { sql } from 'kysely';
import { type Db } from '@sdx/db';
import { resultJson, resultItemsJson, resultPages } from '@sdx/domain/testing';
import { createTestDb } from '@sdx/testing';

/** A stored result is read back in keyset slices of at most N items, whatever its page sizes, whole and in order. */
describe('result slices', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;
  const sizes = [150, 30, 1, 0, 220, 99, 100];
  const all: Array<{ id: number }> = [];

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_s', 's', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
      values ('job_s', 'ws_s', 'twitter', 'followers', 'x', 'x', 'k', 1000, 'completed', 4, 1, 1, 0)`.execute(db);
    let next = 0;
    for (const [index, size] of sizes.entries()) {
      const items = Array.from({ length: size }, () => ({ id: next++, name: `caf\u00e9 "${next}", ok` }));
      all.push(...items);
      await db
        .insertInto('job_result_pages')
        .values({ job_id: 'job_s', page_no: index + 1, item_count: size, items: JSON.stringify(items) })
        .execute();
    }
  });
  afterAll(() => database.drop());

  it.each([1, 7, 100, 1000])('slices of at most %i items cover the result once, in order', async (max) => {
    const slices: unknown[][] = [];
    for await (const slice of resultPages({ db }, { id: 'job_s', source_job_id: null }, max)) slices.push(slice);
    expect(slices.every((s) => s.length > 0 && s.length <= max)).toBe(true);
    expect(slices.flat()).toEqual(all);

    const texts: string[] = [];
    for await (const text of resultItemsJson({ db }, { id: 'job_s', source_job_id: null }, max)) texts.push(text);
    expect(JSON.parse(`[${texts.join(',')}]`)).toEqual(all);
  });

  it('writes the list as JSON text, read through a cached job from its source', async () => {
    let text = '';
    for await (const chunk of resultJson({ db }, { id: 'job_cached', source_job_id: 'job_s', include_posts: 0 })) text += chunk;
    expect(JSON.parse(text)).toEqual(all);
  });
});
