import { type Kysely, Migrator, type Migration, type MigrationProvider, sql } from 'kysely';
import pg from 'pg';
import { faultOf } from '@sdx/config';
import type { Db } from './pool';
import * as m0001 from './migrations/20261122_0001_initial';
import * as m0002 from './migrations/20261122_0002_schedule_run_recovery';
import * as m0003 from './migrations/20261122_0003_active_key_index';
import * as m0004 from './migrations/20261122_0004_partial_batch_index';
import * as m0005 from './migrations/20261123_0005_shared_queue_entry';
import * as m0006 from './migrations/20261123_0006_drop_held_reservation_index';
import * as m0007 from './migrations/20261124_0007_bundle_rates';
import * as m0008 from './migrations/20261124_0008_users_and_teams';
import * as m0009 from './migrations/20261124_0009_key_lifecycle_and_audit';
import * as m0011 from './migrations/20261124_0011_job_deployment';
import * as m0014 from './migrations/20261124_0014_new_only_delivery';
import * as m0015 from './migrations/20261124_0015_job_request_id';
import * as m0016 from './migrations/20261125_0016_list_indexes';
import * as m0017 from './migrations/20261125_0017_result_retention';
import * as m0020 from './migrations/20261125_0020_webhooks';
import * as m0021 from './migrations/20261126_0021_default_workspace';
import * as m0022 from './migrations/20261127_0022_trust';
import * as m0023 from './migrations/20261127_0023_sealed_webhook_secrets';
import * as m0024 from './migrations/20261128_0024_billing';
import * as m0025 from './migrations/20261129_0025_oauth';
import * as m0026 from './migrations/20261130_0026_result_objects';
import * as m0027 from './migrations/20261130_0027_destinations';
import * as m0028 from './migrations/20261130_0028_source_health';
import * as m0029 from './migrations/20261130_0029_workspace_deletions';
import * as m0030 from './migrations/20261207_0030_revocation_chains';
import * as m0031 from './migrations/20261207_0031_mail_requests';
import * as m0032 from './migrations/20261207_0032_billing_disputes';
import * as m0035 from './migrations/20261207_0035_plans';
import * as m0036 from './migrations/20261207_0036_monitors';

/** Migrations are listed in code (not read from disk) so they run the same under tsx, jest and a bundle. */
const MIGRATIONS: Record<string, Migration> = {
  '20261122_0001_initial': m0001,
  '20261122_0002_schedule_run_recovery': m0002,
  '20261122_0003_active_key_index': m0003,
  '20261122_0004_partial_batch_index': m0004,
  '20261123_0005_shared_queue_entry': m0005,
  '20261123_0006_drop_held_reservation_index': m0006,
  '20261124_0007_bundle_rates': m0007,
  '20261124_0008_users_and_teams': m0008,
  '20261124_0009_key_lifecycle_and_audit': m0009,
  '20261124_0011_job_deployment': m0011,
  '20261124_0014_new_only_delivery': m0014,
  '20261124_0015_job_request_id': m0015,
  '20261125_0016_list_indexes': m0016,
  '20261125_0017_result_retention': m0017,
  '20261125_0020_webhooks': m0020,
  '20261126_0021_default_workspace': m0021,
  '20261127_0022_trust': m0022,
  '20261127_0023_sealed_webhook_secrets': m0023,
  '20261128_0024_billing': m0024,
  '20261129_0025_oauth': m0025,
  '20261130_0026_result_objects': m0026,
  '20261130_0027_destinations': m0027,
  '20261130_0028_source_health': m0028,
  '20261130_0029_workspace_deletions': m0029,
  '20261207_0030_revocation_chains': m0030,
  '20261207_0031_mail_requests': m0031,
  '20261207_0032_billing_disputes': m0032,
  '20261207_0035_plans': m0035,
  '20261207_0036_monitors': m0036,
};

/**
 * Every migration runs in its own transaction with a lock timeout and a statement timeout
 * (docs/deployment.md "Expand and contract"): a migration that waits for a lock behind a long
 * query gives up after `lockTimeoutMs` instead of queueing every request of the running
 * release behind it, and is tried again after a pause; a statement that would hold its locks
 * longer than `statementTimeoutMs` fails (a backfill goes in batches).
 */
export interface MigrationBounds {
  /** `lock_timeout` of each migration's transaction. */
  lockTimeoutMs: number;
  /** `statement_timeout` of each migration's transaction. */
  statementTimeoutMs: number;
  /** `deadlock_timeout` of each migration's transaction (when the role may set it): below the service's, so the migration is the deadlock's victim. */
  deadlockTimeoutMs: number;
  /** Tries of one migration that met a lock timeout (or a deadlock) before the run fails. */
  attempts: number;
  /** Pause before the second try; doubled for each further try, up to `maxPauseMs`, with jitter. */
  pauseMs: number;
  maxPauseMs: number;
  /** Told of each retry (for the caller to log). */
  onRetry?: (retry: { migration: string; attempt: number; code: string; pauseMs: number }) => void;
}

export const MIGRATION_BOUNDS: MigrationBounds = {
  lockTimeoutMs: 2_000,
  statementTimeoutMs: 600_000,
  deadlockTimeoutMs: 100,
  attempts: 20,
  pauseMs: 500,
  maxPauseMs: 10_000,
};

/** lock_not_available (lock_timeout) and deadlock_detected: the migration met traffic, not a fault of its own. */
const RETRIED_CODES = new Set(['55P03', '40P01']);

function bounded(migrations: Record<string, Migration>, bounds: MigrationBounds): Record<string, Migration> {
  const limit = async (db: Kysely<unknown>) => {
    await sql`select set_config('lock_timeout', ${`${bounds.lockTimeoutMs}ms`}, true), set_config('statement_timeout', ${`${bounds.statementTimeoutMs}ms`}, true)`.execute(
      db,
    );
    // A migration that meets the running release in a deadlock (it holds a table the release's
    // transaction wants next, and waits for one that transaction holds) is the one to give up:
    // Postgres aborts the waiter that looks first, so the migration looks after
    // `deadlockTimeoutMs` where the service's transactions wait deadlock_timeout (1 s) — the
    // request goes on and the migration is tried again. Only a superuser may set it; under
    // another role the server's setting stays (and the lock timeout still bounds the wait).
    await sql`select case when current_setting('is_superuser') = 'on' then set_config('deadlock_timeout', ${`${bounds.deadlockTimeoutMs}ms`}, true) end`.execute(
      db,
    );
  };
  return Object.fromEntries(
    Object.entries(migrations).map(([name, m]) => [
      name,
      {
        up: async (db: Kysely<unknown>) => {
          await limit(db);
          await m.up(db);
        },
        ...(m.down
          ? {
              down: async (db: Kysely<unknown>) => {
                await limit(db);
                await m.down!(db);
              },
            }
          : {}),
      },
    ]),
  );
}

const providerOf = (migrations: Record<string, Migration>, bounds: MigrationBounds): MigrationProvider => ({
  getMigrations: () => Promise.resolve(bounded(migrations, bounds)),
});
const provider = providerOf(MIGRATIONS, MIGRATION_BOUNDS);
const MIGRATION_LOCK = 715517;

export async function migrateToLatest(db: Db, bounds: Partial<MigrationBounds> = {}): Promise<string[]> {
  return migrateSetToLatest(db, MIGRATIONS, bounds);
}

/**
 * Runs the pending migrations of `migrations` one at a time, each in its own transaction under
 * the bounds (so the locks of one are released before the next takes its own), retrying one
 * that met a lock timeout. Exported for the tests of the bounds.
 */
export async function migrateSetToLatest(
  db: Db,
  migrations: Record<string, Migration>,
  overrides: Partial<MigrationBounds> = {},
): Promise<string[]> {
  const bounds = { ...MIGRATION_BOUNDS, ...overrides };
  // Several processes may start at once (api, worker, scheduler replicas): serialise them.
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    try {
      const migrator = new Migrator({ db: conn, provider: providerOf(migrations, bounds) });
      const applied: string[] = [];
      for (let attempt = 1; ;) {
        const { error, results } = await migrator.migrateUp();
        const done = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        applied.push(...done);
        if (!error) {
          if (done.length === 0) return applied;
          attempt = 1;
          continue;
        }
        const code = (error as { code?: unknown }).code;
        const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName ?? 'migration';
        if (typeof code !== 'string' || !RETRIED_CODES.has(code) || attempt >= bounds.attempts)
          throw error instanceof Error ? error : new Error(faultOf(error).message);
        const pauseMs = Math.round(Math.min(bounds.maxPauseMs, bounds.pauseMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5));
        bounds.onRetry?.({ migration: failed, attempt, code, pauseMs });
        attempt += 1;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
    }
  });
}

/** Migrations this code knows that the database has not run (all of them on an empty database). Creates nothing. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrations = await new Migrator({ db, provider }).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

export async function migrateDown(db: Db): Promise<void> {
  const { error } = await new Migrator({ db, provider }).migrateDown();
  if (error) throw error instanceof Error ? error : new Error(faultOf(error).message);
}

/** The names of every migration, in the order they apply. */
export function migrationNames(): string[] {
  return Object.keys(MIGRATIONS).sort();
}

/** Migrates down until `name` and every later migration are undone. */
export async function migrateDownThrough(db: Db, name: string): Promise<void> {
  const after = migrationNames().filter((n) => n >= name);
  for (let i = 0; i < after.length; i++) await migrateDown(db);
}

/** Creates the database named in the URL when it does not exist yet (first start on a fresh machine). */
export async function ensureDatabase(connectionString: string): Promise<boolean> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) return false;
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`create database "${name.replace(/"/g, '""')}"`);
    } catch (error) {
      // Another process created it first.
      if ((error as { code?: string }).code !== '42P04') throw error;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}
