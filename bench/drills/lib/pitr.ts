import { execFile, execFileSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '@sdx/testing';

const run = promisify(execFile);

/**
 * Postgres clusters for the restore drill: one primary with WAL archiving (wal_level replica,
 * archive_command copying each finished segment into an archive directory), base backups of it
 * with pg_basebackup, and a second cluster restored from a base backup and the archive to a
 * named restore point (restore_command, recovery_target_name, then promoted). Each on a free
 * loopback port in a temporary directory, stopped by its own data directory (pg_ctl), never the
 * shared server. As root, the clusters belong to the `postgres` OS user (initdb refuses root).
 */

/** A Postgres binary: on PATH, else the newest /usr/lib/postgresql/<version>/bin. */
export function postgresBin(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', name)))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin', name);
  }
  throw new Error(`${name} not found: install the Postgres server binaries`);
}

const asRoot = () => process.getuid?.() === 0;

async function asOwner(name: string, args: string[]): Promise<string> {
  const bin = postgresBin(name);
  const { stdout } = await run(asRoot() ? 'runuser' : bin, asRoot() ? ['-u', 'postgres', '--', bin, ...args] : args, {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** A directory the cluster's owner may write. */
function ownedDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
  if (asRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
}

function chownTree(dir: string): void {
  if (asRoot()) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
}

export interface Cluster {
  port: number;
  data: string;
  url(database?: string): string;
  query<R extends pg.QueryResultRow>(database: string, text: string, values?: unknown[]): Promise<R[]>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
}

function cluster(dir: string, data: string, port: number): Cluster & { start(): Promise<void> } {
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    data,
    url,
    async query<R extends pg.QueryResultRow>(database: string, text: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: url(database) });
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end();
      }
    },
    async start() {
      await asOwner('pg_ctl', ['-D', data, '-l', path.join(dir, `log-${path.basename(data)}`), '-w', '-t', '120', 'start']);
    },
    async stop(mode = 'fast') {
      await asOwner('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']).catch(() => undefined);
    },
  };
}

export interface ArchivingPrimary extends Cluster {
  /** Where finished WAL segments are copied (what restore_command reads). */
  archive: string;
  /** pg_basebackup of the running cluster (fast checkpoint, the WAL it needs streamed along); answers its size in bytes. */
  baseBackup(into: string): Promise<number>;
  /** Closes the current WAL segment and waits until the archiver has copied it. */
  archiveCurrentWal(timeoutMs?: number): Promise<string>;
  /** A directory beside the cluster's, for backups. */
  dir: string;
  destroy(): Promise<void>;
}

export async function startArchivingPrimary(): Promise<ArchivingPrimary> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-drill-pitr-'));
  ownedDir(dir);
  const data = path.join(dir, 'primary');
  const archive = path.join(dir, 'archive');
  ownedDir(archive);
  const port = await freePort();
  await asOwner('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  // fsync off: the drill never crashes the machine. Archiving as production runs it (docs/operations.md).
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      `port = ${port}`,
      `unix_socket_directories = '${dir}'`,
      `listen_addresses = '127.0.0.1'`,
      'max_connections = 300',
      'fsync = off',
      'wal_level = replica',
      'max_wal_senders = 4',
      'archive_mode = on',
      `archive_command = 'test ! -f ${archive}/%f && cp %p ${archive}/%f'`,
      'archive_timeout = 60',
      '',
    ].join('\n'),
  );
  const primary = cluster(dir, data, port);
  await primary.start();
  return {
    ...primary,
    archive,
    dir,
    async baseBackup(into) {
      ownedDir(path.dirname(into));
      await asOwner('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-D',
        into,
        '-X',
        'stream',
        '-c',
        'fast',
        '--no-sync',
      ]);
      return sizeOf(into);
    },
    async archiveCurrentWal(timeoutMs = 30_000) {
      const [switched] = await primary.query<{ wal: string }>('postgres', 'select pg_walfile_name(pg_switch_wal()) as wal');
      const deadline = Date.now() + timeoutMs;
      while (!existsSync(path.join(archive, switched.wal))) {
        if (Date.now() > deadline) throw new Error(`WAL segment ${switched.wal} not archived within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return switched.wal;
    },
    async destroy() {
      await primary.stop('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type RecoveryTarget = { name: string } | { time: Date };

/**
 * A second cluster from a base backup: its files copied, archiving off (it must not write into
 * the primary's archive), restore_command reading the archive, recovery to `target`, then
 * promoted. Resolves once it accepts writes.
 */
export async function restoreCluster(
  primary: ArchivingPrimary,
  backup: string,
  target: RecoveryTarget,
): Promise<Cluster & { destroy(): Promise<void> }> {
  const data = path.join(primary.dir, `restored-${Date.now()}`);
  cpSync(backup, data, { recursive: true });
  chownTree(data);
  execFileSync('chmod', ['700', data]);
  const port = await freePort();
  const recoveryTarget =
    'name' in target ? `recovery_target_name = '${target.name}'` : `recovery_target_time = '${target.time.toISOString()}'`;
  appendFileSync(
    path.join(data, 'postgresql.conf'),
    [
      '',
      `port = ${port}`,
      'archive_mode = off',
      `restore_command = 'cp ${primary.archive}/%f %p'`,
      recoveryTarget,
      'recovery_target_action = promote',
      '',
    ].join('\n'),
  );
  writeFileSync(path.join(data, 'recovery.signal'), '');
  chownTree(data);
  const restored = cluster(primary.dir, data, port);
  await restored.start();
  const deadline = Date.now() + 120_000;
  for (;;) {
    const [state] = await restored
      .query<{ recovering: boolean }>('postgres', 'select pg_is_in_recovery() as recovering')
      .catch(() => [{ recovering: true }]);
    if (!state.recovering) break;
    if (Date.now() > deadline) throw new Error('the restored cluster did not finish recovery within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    ...restored,
    async destroy() {
      await restored.stop('immediate');
      rmSync(data, { recursive: true, force: true });
    },
  };
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? sizeOf(full) : statSync(full).size;
  }
  return total;
}
