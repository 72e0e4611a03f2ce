import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/**
 * Private servers for fault drills: a Postgres cluster and a redis-server of their own, on free
 * loopback ports in temporary directories, which a drill may stop, restart or empty without
 * touching the shared servers. Each is stopped by the process that started it, by its own PID.
 */

/** A free TCP port on loopback (the kernel's pick). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface PrivateRedis {
  url: string;
  port: number;
  /** Stops the server; `save` writes its data first so that start() brings it back. */
  stop(options?: { save?: boolean }): Promise<void>;
  /** Starts it again on the same port, with the data saved by the last stop({ save: true }), if any. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-drill-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0`;
  let proc: ChildProcess | null = null;
  const ping = async () => {
    const client = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } finally {
      client.disconnect();
    }
  };
  const start = async () => {
    proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', 'dump.rdb'],
      {
        stdio: 'ignore',
      },
    );
    await until(ping, 10_000, 'redis-server');
  };
  const stop = async (options: { save?: boolean } = {}) => {
    const running = proc;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    if (!options.save && existsSync(path.join(dir, 'dump.rdb'))) unlinkSync(path.join(dir, 'dump.rdb'));
    const client = new IORedis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    await client.call('shutdown', options.save ? 'save' : 'nosave').catch(() => undefined);
    client.disconnect();
    await exited;
    proc = null;
  };
  await start();
  return {
    url,
    port,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivatePostgres {
  port: number;
  /** The URL of a database of the cluster (postgres by default). */
  url(database?: string): string;
  /** Creates a database and answers its URL. */
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop: `fast` ends sessions with 57P01 (admin_shutdown), `immediate` kills them as a crash would. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stops the cluster for good and removes its directory. */
  destroy(): Promise<void>;
}

/** initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/<version>/bin. */
function postgresBin(name: string): string {
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

/**
 * initdb and pg_ctl refuse to run as root: as root, the cluster belongs to (and its tools run
 * as) the `postgres` OS user.
 */
async function asClusterOwner(name: string, args: string[]): Promise<void> {
  const bin = postgresBin(name);
  const root = process.getuid?.() === 0;
  await run(root ? 'runuser' : bin, root ? ['-u', 'postgres', '--', bin, ...args] : args, { maxBuffer: 16 * 1024 * 1024 });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-drill-pg-'));
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const port = await freePort();
  await asClusterOwner('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  // fsync off: the drills crash Postgres, never the machine, so what reached the OS survives.
  // synchronous_commit stays on: a commit is acknowledged only once its WAL is written, so an
  // immediate stop (a crash) loses no job a client was told of, as on a real server.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300`;
  const start = () => asClusterOwner('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  await start();
  return {
    port,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`create database "${name.replace(/"/g, '""')}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop(mode = 'fast') {
      await asClusterOwner('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    start,
    async destroy() {
      try {
        await asClusterOwner('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
