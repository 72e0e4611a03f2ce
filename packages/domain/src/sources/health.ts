import { sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Db } from '@sdx/db';
import { recordSourceAttempt, recordSourceDown, type SourceHealthSample } from '@sdx/metrics';
import type { SourceGate, SourceReport } from '@sdx/providers';
import type { Resources } from '../resources';

/**
 * The health of each live source (issue 38 item 4), kept in Postgres so every worker shares it
 * (table source_health, one row per adapter; the 15-minute error rate from job_attempt_sources).
 * Only attempts on live sources write it (the sandbox never reports), once per attempt.
 */

/** Authentication failures in a row that mark a source down. */
export const DOWN_AFTER_AUTH_FAILURES = 10;

/** A source's health, as GET /v1/platforms shows it. */
export interface SourceHealth {
  provider: string;
  source: 'official' | 'vendor';
  status: 'up' | 'down';
  down_since: string | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  /** Authentication failures in a row (reset by a success). */
  auth_failures: number;
  /** Tries of the last 15 minutes, and the share of them that failed (null with none). */
  attempts_15m: number;
  error_rate_15m: number | null;
  /** What the quota counts, what is left, and (where costs are counted locally) what today's requests used. */
  quota: { unit: string; remaining: number | null; used_today: number | null } | null;
}

/** YouTube's quota day: midnight to midnight Pacific time. */
export function quotaDayOf(at: Date): string {
  return DateTime.fromJSDate(at).setZone('America/Los_Angeles').toISODate() ?? at.toISOString().slice(0, 10);
}

/**
 * Folds one attempt's reports into source_health: a success ends the run of authentication
 * failures (and a down mark); an `upstream_auth` adds to it, and the tenth in a row marks the
 * source down (a warning and sdx_source_marked_down_total); quota as the attempt saw it.
 */
export async function recordSourceHealth(
  services: Pick<Resources, 'db' | 'log' | 'clock'>,
  reports: readonly SourceReport[],
): Promise<void> {
  const now = services.clock.now();
  const day = quotaDayOf(now);
  for (const r of reports) {
    recordSourceAttempt(r.provider, r.source, r.outcome);
    const served = r.outcome === 'served';
    const auth = r.error_code === 'upstream_auth';
    const quota = r.quota;
    const row = await services.db
      .insertInto('source_health')
      .values({
        provider: r.provider,
        source: r.source,
        last_success_at: served ? now : null,
        last_failure_at: served ? null : now,
        auth_failures: auth ? 1 : 0,
        down_since: null,
        quota_unit: quota?.unit ?? null,
        quota_remaining: quota?.remaining ?? null,
        quota_limit: quota?.limit ?? null,
        quota_day: quota && quota.used > 0 ? day : null,
        quota_used: quota?.used ?? 0,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('provider').doUpdateSet({
          last_success_at: sql`coalesce(excluded.last_success_at, source_health.last_success_at)`,
          last_failure_at: sql`coalesce(excluded.last_failure_at, source_health.last_failure_at)`,
          auth_failures: served ? 0 : auth ? sql`source_health.auth_failures + 1` : sql`source_health.auth_failures`,
          down_since: served
            ? null
            : auth
              ? sql`case when source_health.auth_failures + 1 >= ${DOWN_AFTER_AUTH_FAILURES} then coalesce(source_health.down_since, ${now}) else source_health.down_since end`
              : sql`source_health.down_since`,
          quota_unit: sql`coalesce(excluded.quota_unit, source_health.quota_unit)`,
          quota_remaining: sql`coalesce(excluded.quota_remaining, source_health.quota_remaining)`,
          quota_limit: sql`coalesce(excluded.quota_limit, source_health.quota_limit)`,
          quota_used: sql`case when excluded.quota_day is null then source_health.quota_used
            when source_health.quota_day = excluded.quota_day then source_health.quota_used + excluded.quota_used
            else excluded.quota_used end`,
          quota_day: sql`coalesce(excluded.quota_day, source_health.quota_day)`,
          updated_at: now,
        }),
      )
      .returning(['auth_failures'])
      .executeTakeFirstOrThrow();
    if (auth && row.auth_failures === DOWN_AFTER_AUTH_FAILURES) {
      recordSourceDown(r.provider);
      services.log.warn(
        { provider: r.provider, source: r.source, auth_failures: row.auth_failures },
        `source ${r.provider} marked down after ${DOWN_AFTER_AUTH_FAILURES} authentication failures in a row; skipped until a probe succeeds`,
      );
    }
  }
}

/** Every live source's health, with its tries of the last 15 minutes (one statement). */
export async function readSourceHealth(db: Db, now: Date = new Date()): Promise<SourceHealth[]> {
  const since = new Date(now.getTime() - 15 * 60_000);
  const today = quotaDayOf(now);
  const rows = await db
    .selectFrom('source_health as h')
    .selectAll('h')
    .select([
      sql<number>`(select count(*) from job_attempt_sources s where s.provider = h.provider and s.created_at > ${since})::int`.as('tries'),
      sql<number>`(select count(*) from job_attempt_sources s where s.provider = h.provider and s.created_at > ${since} and s.outcome = 'failed')::int`.as(
        'failures',
      ),
    ])
    .orderBy('h.provider')
    .execute();
  return rows.map((h) => {
    const usedToday = h.quota_day === today ? h.quota_used : h.quota_day === null ? null : 0;
    const remaining = h.quota_remaining ?? (h.quota_limit !== null && usedToday !== null ? Math.max(0, h.quota_limit - usedToday) : null);
    return {
      provider: h.provider,
      source: h.source as SourceHealth['source'],
      status: h.down_since ? 'down' : 'up',
      down_since: h.down_since?.toISOString() ?? null,
      last_success_at: h.last_success_at?.toISOString() ?? null,
      last_failure_at: h.last_failure_at?.toISOString() ?? null,
      auth_failures: h.auth_failures,
      attempts_15m: h.tries,
      error_rate_15m: h.tries > 0 ? Math.round((h.failures / h.tries) * 1000) / 1000 : null,
      quota: h.quota_unit ? { unit: h.quota_unit, remaining, used_today: usedToday } : null,
    };
  });
}

/** The sdx_source_* gauges' samples (packages/metrics addSourceHealthSource). */
export async function sourceHealthSamples(db: Db, now: Date = new Date()): Promise<SourceHealthSample[]> {
  return (await readSourceHealth(db, now)).map((h) => ({
    provider: h.provider,
    source: h.source,
    down: h.status === 'down',
    last_success_at: h.last_success_at ? new Date(h.last_success_at) : null,
    error_rate_15m: h.error_rate_15m,
    quota_remaining: h.quota?.remaining ?? null,
  }));
}

/**
 * Which sources an attempt may try (the providers' SourceGate): a source marked down is skipped,
 * except by one attempt per `probeIntervalMs` in this process, which is its probe (a probe that
 * succeeds ends the mark for every worker). The marks are read from source_health at most every
 * `refreshMs`, in the background: `usable` never waits. Only fallback chains ask, so the sandbox
 * and single-source operations never read it.
 */
export class SourceHealthGate implements SourceGate {
  private down = new Set<string>();
  private readonly probes = new Map<string, number>();
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly options: { refreshMs?: number; probeIntervalMs?: number; now?: () => number } = {},
  ) {}

  usable(provider: string): boolean {
    const now = (this.options.now ?? Date.now)();
    if (now - this.readAt >= (this.options.refreshMs ?? 5_000)) void this.refresh();
    if (!this.down.has(provider)) return true;
    const last = this.probes.get(provider) ?? -Infinity;
    if (now - last < (this.options.probeIntervalMs ?? 60_000)) return false;
    this.probes.set(provider, now);
    return true;
  }

  /** Reads the down marks now (also called by `usable` when they are older than `refreshMs`). */
  refresh(): Promise<void> {
    this.readAt = (this.options.now ?? Date.now)();
    this.reading ??= this.db
      .selectFrom('source_health')
      .select('provider')
      .where('down_since', 'is not', null)
      .execute()
      .then((rows) => {
        this.down = new Set(rows.map((r) => r.provider));
      })
      .catch(() => undefined)
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }
}
