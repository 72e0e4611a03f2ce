import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { createDb, type Db, migrateDownThrough, migrateToLatest, migrationNames } from '@sdx/db';
import { baseDatabaseUrl, databaseUrlFor, TEST_SECRETS_KEY } from '@sdx/testing';
import {
  exportMigrations,
  type PreviousRelease,
  resolvePreviousRelease,
  resolvePreviousReleases,
  runExportedMigrations,
} from '../../../bench/drills/lib/previous-release';
import { compareSchemas, CONTRACTED, type SchemaSnapshot, snapshotSchema } from './schema-compat';

/**
 * Expand and contract (docs/deployment.md): this checkout's migrations, run on a release's
 * schema, must leave every table and column that release reads. The releases are those of
 * CHANGELOG.md (bench/drills/lib/previous-release.ts): the last three before HEAD, since a
 * deployment upgrades from the release it runs, which may be older than the latest; with
 * `PREVIOUS_RELEASE` set, that one. Without a release in the changelog, the newest v* tag, else
 * the code before the newest change to the migrations, else HEAD on a shallow clone.
 */

/** The releases to check against: the last three of CHANGELOG.md, or the one PREVIOUS_RELEASE or git gives. */
function releasesToCheck(): Array<PreviousRelease | null> {
  if (!process.env.PREVIOUS_RELEASE) {
    try {
      const releases = resolvePreviousReleases(undefined, { PREVIOUS_RELEASE: 'all' });
      if (releases.length > 0) return releases;
    } catch {
      // Not a git checkout, or no release in the changelog: the single previous release below.
    }
  }
  const releases = process.env.PREVIOUS_RELEASE?.trim() === 'all' ? resolvePreviousReleases() : [resolvePreviousRelease()];
  return releases.length > 0 ? releases : [null];
}

const table = (columns: Record<string, [string, boolean?, boolean?]>): SchemaSnapshot[string] => ({
  kind: 'table',
  columns: Object.fromEntries(
    Object.entries(columns).map(([name, [type, nullable = true, hasDefault = false]]) => [name, { type, nullable, hasDefault }]),
  ),
});

describe('the schema checker', () => {
  const previous: SchemaSnapshot = {
    jobs: table({ id: ['text', false], status: ['text', false], target: ['text', false], note: ['text'] }),
    schedules: table({ id: ['text', false], name: ['text', false] }),
  };

  it('passes an additive change: a new table, a nullable column, a NOT NULL column with a default', () => {
    const next: SchemaSnapshot = {
      jobs: table({
        id: ['text', false],
        status: ['text', false],
        target: ['text', false],
        note: ['text'],
        label: ['text'],
        attempts: ['integer', false, true],
      }),
      schedules: previous.schedules,
      exports: table({ id: ['text', false] }),
    };
    expect(compareSchemas(previous, next, [])).toEqual([]);
  });

  it('catches a dropped column and a dropped table', () => {
    const next: SchemaSnapshot = { jobs: table({ id: ['text', false], status: ['text', false], target: ['text', false] }) };
    expect(compareSchemas(previous, next, []).map((f) => [f.kind, f.table, f.column])).toEqual([
      ['column-removed', 'jobs', 'note'],
      ['table-removed', 'schedules', undefined],
    ]);
  });

  it('catches a renamed column and a renamed table', () => {
    const next: SchemaSnapshot = {
      jobs: table({ id: ['text', false], status: ['text', false], handle: ['text', false], note: ['text'] }),
      recurring_jobs: previous.schedules,
    };
    const findings = compareSchemas(previous, next, []);
    expect(findings.map((f) => [f.kind, f.table, f.column])).toEqual([
      ['column-renamed', 'jobs', 'target'],
      ['table-renamed', 'schedules', undefined],
    ]);
    expect(findings[0].detail).toContain('jobs.handle');
    expect(findings[1].detail).toContain('recurring_jobs');
  });

  it('catches a type change, a column made NOT NULL and a new NOT NULL column without a default', () => {
    const next: SchemaSnapshot = {
      jobs: table({
        id: ['text', false],
        status: ['integer', false],
        target: ['text', false],
        note: ['text', false],
        owner: ['text', false],
      }),
      schedules: previous.schedules,
    };
    expect(compareSchemas(previous, next, []).map((f) => [f.kind, f.column])).toEqual([
      ['column-type-changed', 'status'],
      ['column-now-required', 'note'],
      ['new-required-column', 'owner'],
    ]);
  });

  it('allows a removal listed as contracted, and only that one', () => {
    const next: SchemaSnapshot = { jobs: table({ id: ['text', false], status: ['text', false], target: ['text', false] }) };
    const contracted = [{ release: 'v1.1.0', table: 'jobs', column: 'note', reason: 'unread since v1.0.0' }];
    expect(compareSchemas(previous, next, contracted).map((f) => [f.kind, f.table])).toEqual([['table-removed', 'schedules']]);
    expect(compareSchemas(previous, next, [...contracted, { release: 'v1.1.0', table: 'schedules', reason: 'replaced' }])).toEqual([]);
  });

  it('lists every contracted removal with its release and reason', () => {
    for (const entry of CONTRACTED) {
      expect(entry.release).toMatch(/^v\d+\.\d+\.\d+$/);
      expect(entry.reason.length).toBeGreaterThan(10);
    }
  });
});

describe.each(releasesToCheck().map((release) => [release?.rev ?? 'no git', release] as const))(
  "this checkout's migrations on the schema of release %s",
  (_rev, release) => {
    let admin: pg.Client;
    let name: string;
    let db: Db;
    let dir: string;

    beforeAll(async () => {
      name = `sdx_migsafe_${randomBytes(5).toString('hex')}`;
      admin = new pg.Client({ connectionString: baseDatabaseUrl() });
      await admin.connect();
      // An empty database (not the migrated template): the previous release's migrations build it.
      await admin.query(`create database ${name} template template0`);
      db = createDb({ connectionString: databaseUrlFor(name), max: 2 });
      dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-previous-migrations-'));
    });

    afterAll(async () => {
      await db.destroy();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    });

    it('keeps every table and column the previous release reads (or lists it as contracted)', async () => {
      let previous: SchemaSnapshot;
      let next: SchemaSnapshot;
      if (release) {
        // Said on every run, so a fallback (a shallow clone compares with HEAD) is never silent.
        process.stdout.write(`migration safety: ${release.note} (${release.sha.slice(0, 12)})\n`);
        const names = exportMigrations(release.sha, dir);
        expect(names.length).toBeGreaterThan(0);
        runExportedMigrations(dir, databaseUrlFor(name), { SECRETS_KEY: TEST_SECRETS_KEY });
        previous = await snapshotSchema(db);
        // The upgrade itself: the previous release's migrations are a prefix of this checkout's.
        await migrateToLatest(db);
        next = await snapshotSchema(db);
      } else {
        // Outside git: the newest migration against the schema before it (its own down).
        const newest = migrationNames().at(-1)!;
        process.stdout.write(
          `migration safety: not a git checkout, so no previous release: ${newest} is compared with the schema before it\n`,
        );
        await migrateToLatest(db);
        next = await snapshotSchema(db);
        await migrateDownThrough(db, newest);
        previous = await snapshotSchema(db);
        await migrateToLatest(db);
      }
      expect(Object.keys(previous)).toEqual(expect.arrayContaining(['jobs', 'workspaces', 'credit_ledger']));
      const findings = compareSchemas(previous, next);
      expect(findings.map((f) => f.detail)).toEqual([]);

      // The check is live on the real schema: a contracting change made now is caught.
      await expect(
        db.transaction().execute(async (tx) => {
          await sql`alter table jobs rename column target to handle`.execute(tx);
          await sql`drop table schedule_runs cascade`.execute(tx);
          const broken = compareSchemas(previous, await snapshotSchema(tx));
          throw Object.assign(new Error('rolled back'), { broken });
        }),
      ).rejects.toMatchObject({
        broken: expect.arrayContaining([
          expect.objectContaining({ kind: 'column-renamed', table: 'jobs', column: 'target' }),
          expect.objectContaining({ kind: 'table-removed', table: 'schedule_runs' }),
        ]),
      });
    }, 120_000);
  },
);
