import { sql } from 'kysely';
import type { Db } from '@sdx/db';
import type { Logger } from '@sdx/config';
import { SESSION_IDLE_MS } from '../accounts/sessions';
import { deleteObjectsQuietly } from '../jobs/result-pages';
import { purgeMonitorPoints } from '../monitors/retention';
import type { ResultObjects } from '../resources';

/**
 * What the service deletes once it is no longer owed to anyone (extensions.md 9), run by the
 * scheduler every RETENTION_INTERVAL_MS:
 * - results: RESULT_RETENTION_DAYS after a job completed, its result pages are deleted and the job
 *   stays, with `result_expired` set (its result reads as null, its export and items 410);
 * - idempotency keys, kept 24 hours (they expire at `expires_at`);
 * - sessions that ended: signed out, replaced by a password change, idle for 7 days or past their
 *   30 days;
 * - verification and reset tokens past their lifetime (used or not);
 * - mail sent or given up on, 7 days after it was written (the hourly caps per address read the
 *   last hour of it; the bodies were dropped when they were sent).
 * Audit events, the credit ledger, schedule runs and the job rows themselves are kept.
 *
 * Every purge runs as short statements on the pool, each deleting a bounded batch and committing
 * on its own, oldest first, until one comes back short: no lock outlives one batch, and the
 * rows locked are old ones no request writes. Rows another transaction holds are skipped, not
 * waited for; the next pass takes them. `now` comes from the caller's clock.
 */

/** Idempotency keys or sessions one statement deletes at most. */
export const RETENTION_BATCH = 1000;

/** Jobs whose results one statement expires at most (a result may hold 25,000 items). */
export const RESULT_PURGE_BATCH = 50;

/** The advisory lock that lets one scheduler replica at a time expire results (see purgeExpiredResults). */
const RESULT_PURGE_LOCK = 715519;

const DAY_MS = 24 * 3600_000;

/**
 * Expires the results of jobs completed `retentionDays` or more before `now`: each job's
 * `result_expired` is set, and the pages it read are deleted once no job still within its
 * retention reads them (a cached job reads the pages of the job it reused, source_job_id, and
 * completes later than it, so the pages go with the last of them). Returns the jobs expired and
 * the pages deleted.
 *
 * Each batch takes a transaction-level advisory lock first: with several scheduler replicas,
 * one expires results at a time (another finds the lock taken and leaves the work to it), so
 * two batches never each see the other's jobs as unexpired and both keep pages nobody reads.
 */
export async function purgeExpiredResults(
  store: RetentionStore,
  now: Date,
  retentionDays: number,
  batchSize = RESULT_PURGE_BATCH,
): Promise<{ jobs: number; pages: number }> {
  const { db } = store;
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS);
  const total = { jobs: 0, pages: 0 };
  for (;;) {
    const batch = await db.transaction().execute(async (tx) => {
      const { rows: lock } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${RESULT_PURGE_LOCK}) as got`.execute(tx);
      if (!lock[0]?.got) return null;
      const { rows } = await sql<{ jobs: number; pages: number; objects: string[] | null }>`
        with picked as (
          select id, coalesce(source_job_id, id) as source
          from jobs
          where status = 'completed' and not result_expired and finished_at <= ${cutoff}
          order by finished_at
          limit ${batchSize}
          for update skip locked
        ), expired as (
          update jobs j set result_expired = true from picked where j.id = picked.id returning picked.source
        ), unread as (
          -- The statement sees the jobs it expires as they were: they are left out by ID.
          select distinct e.source from expired e
          where not exists (
            select 1 from jobs r
            where (r.id = e.source or r.source_job_id = e.source)
              and r.status = 'completed' and not r.result_expired
              and r.id not in (select id from picked)
          )
        ), gone as (
          delete from job_result_pages p using unread u where p.job_id = u.source returning p.object_key
        )
        select (select count(*) from expired)::int as jobs, (select count(*) from gone)::int as pages,
               (select array_agg(object_key) from gone where object_key is not null) as objects
      `.execute(tx);
      return rows[0];
    });
    if (!batch) return total;
    // The rows are gone (committed): their objects go next; one left behind is the sweeper's.
    if (batch.objects && store.log) await deleteObjectsQuietly({ db, resultObjects: store.resultObjects, log: store.log }, batch.objects);
    total.jobs += batch.jobs;
    total.pages += batch.pages;
    if (batch.jobs < batchSize) return total;
  }
}

/**
 * Deletes the idempotency records expired at `now` (kept 24 hours), oldest first. Rows another
 * transaction holds (an admission replacing an expired record) are skipped rather than waited
 * for. Returns the number of records deleted.
 */
export async function purgeExpiredIdempotencyKeys(db: Db, now: Date, batchSize = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from idempotency_keys
      where (workspace_id, endpoint, key) in (
        select workspace_id, endpoint, key from idempotency_keys
        where expires_at <= ${now}
        order by expires_at
        limit ${limit}
        for update skip locked
      )
    `,
  );
}

/**
 * Deletes the sessions that have ended by `now`: signed out or ended by a password change
 * (`ended_at`), past their 30 days (`expires_at`), or unused for SESSION_IDLE_MS. None of them
 * can authenticate again (sessions.ts resolveSession refuses them). Returns the number deleted.
 */
export async function purgeEndedSessions(db: Db, now: Date, batchSize = RETENTION_BATCH): Promise<number> {
  const idleSince = new Date(now.getTime() - SESSION_IDLE_MS);
  return deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from sessions
      where id in (
        select id from sessions
        where ended_at is not null or expires_at <= ${now} or last_seen_at <= ${idleSince}
        limit ${limit}
        for update skip locked
      )
    `,
  );
}

/** Deletes verification and reset tokens past their lifetime at `now`. */
export async function purgeExpiredAuthTokens(db: Db, now: Date, batchSize = RETENTION_BATCH): Promise<number> {
  return deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from auth_tokens
      where id in (select id from auth_tokens where expires_at <= ${now} order by expires_at limit ${limit} for update skip locked)
    `,
  );
}

/**
 * Authorization codes kept a day past their 10 minutes: until then a code presented again still
 * revokes the grant it made (a stolen code's replay), later it is only unknown.
 */
export const OAUTH_CODES_KEPT_MS = DAY_MS;

/**
 * Deletes OAuth tokens past their lifetime (access tokens after an hour, refresh tokens after
 * their 30 days, retired or not: a retired refresh token is kept until then so that its reuse
 * revokes the grant) and authorization codes OAUTH_CODES_KEPT_MS past theirs. Returns the rows deleted.
 */
export async function purgeExpiredOAuth(db: Db, now: Date, batchSize = RETENTION_BATCH): Promise<number> {
  const codesBefore = new Date(now.getTime() - OAUTH_CODES_KEPT_MS);
  const tokens = await deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from oauth_tokens
      where token_hash in (select token_hash from oauth_tokens where expires_at <= ${now} order by expires_at limit ${limit} for update skip locked)
    `,
  );
  const codes = await deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from oauth_codes
      where code_hash in (select code_hash from oauth_codes where expires_at <= ${codesBefore} order by expires_at limit ${limit} for update skip locked)
    `,
  );
  return tokens + codes;
}

/** Mail rows kept after they were written, once sent or given up on. */
export const MAIL_KEPT_MS = 7 * DAY_MS;

/** Deletes mail sent or given up on more than MAIL_KEPT_MS before `now`. Pending mail is kept. */
export async function purgeOldMail(db: Db, now: Date, batchSize = RETENTION_BATCH): Promise<number> {
  const before = new Date(now.getTime() - MAIL_KEPT_MS);
  return deleteInBatches(
    db,
    batchSize,
    (limit) => sql`
      delete from mail_outbox
      where id in (
        select id from mail_outbox where status <> 'pending' and created_at <= ${before} order by created_at limit ${limit} for update skip locked
      )
    `,
  );
}

/** Runs `statement` (a delete of at most `limit` rows) until one deletes fewer; the rows deleted in all. */
async function deleteInBatches(db: Db, batchSize: number, statement: (limit: number) => ReturnType<typeof sql>): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await statement(batchSize).execute(db);
    const batch = Number(result.numAffectedRows ?? 0n);
    deleted += batch;
    if (batch < batchSize) return deleted;
  }
}

/** What the purges need: the database, and the result bucket whose objects expired results name (with a log for what it could not delete). */
export interface RetentionStore {
  db: Db;
  resultObjects?: ResultObjects;
  log?: Logger;
}

export interface RetentionPolicy {
  /** RESULT_RETENTION_DAYS. */
  resultRetentionDays: number;
  /** MONITOR_RETENTION_DAYS: monitors' points older than this go (monitors/retention.ts); absent: kept. */
  monitorRetentionDays?: number;
  /** Idempotency keys or sessions per statement (RETENTION_BATCH when absent). */
  batchSize?: number;
  /** Jobs per result-expiry statement (RESULT_PURGE_BATCH when absent). */
  resultBatchSize?: number;
}

export interface RetentionPass {
  resultsExpired: number;
  resultPagesDeleted: number;
  idempotencyKeysDeleted: number;
  sessionsDeleted: number;
  authTokensDeleted: number;
  /** Expired OAuth access and refresh tokens and authorization codes. */
  oauthDeleted: number;
  mailDeleted: number;
  /** Monitors' points deleted, and whole months of them dropped. */
  monitorPointsDeleted: number;
  monitorPartitionsDropped: number;
}

/** One pass of every purge, as of `now`. */
export async function runRetention(store: RetentionStore, now: Date, policy: RetentionPolicy): Promise<RetentionPass> {
  const { db } = store;
  const results = await purgeExpiredResults(store, now, policy.resultRetentionDays, policy.resultBatchSize);
  const idempotencyKeysDeleted = await purgeExpiredIdempotencyKeys(db, now, policy.batchSize);
  const sessionsDeleted = await purgeEndedSessions(db, now, policy.batchSize);
  const authTokensDeleted = await purgeExpiredAuthTokens(db, now, policy.batchSize);
  const oauthDeleted = await purgeExpiredOAuth(db, now, policy.batchSize);
  const mailDeleted = await purgeOldMail(db, now, policy.batchSize);
  const points =
    policy.monitorRetentionDays === undefined
      ? { pointsDeleted: 0, partitionsDropped: 0 }
      : await purgeMonitorPoints(db, now, policy.monitorRetentionDays);
  return {
    resultsExpired: results.jobs,
    resultPagesDeleted: results.pages,
    idempotencyKeysDeleted,
    sessionsDeleted,
    authTokensDeleted,
    oauthDeleted,
    mailDeleted,
    monitorPointsDeleted: points.pointsDeleted,
    monitorPartitionsDropped: points.partitionsDropped,
  };
}
