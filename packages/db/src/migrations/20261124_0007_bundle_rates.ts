import { type Kysely, sql } from 'kysely';
import { bundlePostsSpec, isPlatform } from '@sdx/catalog';

/**
 * The rates of bundled posts (a profile with include_posts) are recorded on the job at
 * admission, beside the operation's own rates (credit_rate, results_per_credit, base_credits),
 * so that settlement prices what a job delivered at the rates it was admitted at: a catalog
 * price change never re-prices admitted work. Jobs without bundled posts leave them null.
 * Active bundle jobs admitted before this migration get today's posts rates, the rates their
 * reservation was computed with.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table jobs
      add column bundle_credit_rate integer,
      add column bundle_results_per_credit integer,
      add column bundle_base_credits integer
  `.execute(db);
  const { rows } = await sql<{ platform: string }>`
    select distinct platform from jobs where include_posts > 0 and status in ('queued', 'running')
  `.execute(db);
  for (const { platform } of rows) {
    const spec = isPlatform(platform) ? bundlePostsSpec(platform) : undefined;
    if (!spec) continue;
    await sql`
      update jobs
      set bundle_credit_rate = ${spec.credits_per_result}, bundle_results_per_credit = ${spec.results_per_credit},
          bundle_base_credits = ${spec.base_credits}
      where platform = ${platform} and include_posts > 0 and status in ('queued', 'running')
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table jobs
      drop column if exists bundle_credit_rate,
      drop column if exists bundle_results_per_credit,
      drop column if exists bundle_base_credits
  `.execute(db);
}
