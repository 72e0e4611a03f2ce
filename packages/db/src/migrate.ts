import { Migrator, type Migration, type MigrationProvider, sql } from 'kysely';
import pg from 'pg';
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
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };
const MIGRATION_LOCK = 715517;

export async function migrateToLatest(db: Db): Promise<string[]> {
  // Several processes may start at once (api, worker, scheduler replicas): serialise them.
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
    try {
      const { error, results } = await new Migrator({ db: conn, provider }).migrateToLatest();
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
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
  if (error) throw error instanceof Error ? error : new Error(String(error));
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
