import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * Private Postgres clusters and Redis servers for fault drills: each on a free loopback port,
 * in its own temporary directory, so a drill can stop, restart or kill it without touching the
 * shared servers other work uses. Needs the Postgres server binaries (initdb, pg_ctl) and
 * redis-server; as root, Postgres runs as the `postgres` OS user (initdb refuses root).
 */

const run = promisify(execFile);

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** initdb/pg_ctl: on PATH, else the newest /usr/lib/postgresql/<v>/bin. */
function postgresBin(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', name))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin', name);
  }
  throw new Error(`${name} not found: install the Postgres server binaries`);
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a Postgres binary, as the postgres OS user when this process is root. */
async function asPostgres(bin: string, args: string[]): Promise<string> {
  const command = isRoot ? 'runuser' : bin;
  const argv = isRoot ? ['-u', 'postgres', '--', bin, ...args] : args;
  const { stdout } = await run(command, argv, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

function chownTree(dir: string, uid: number, gid: number): void {
  chownSync(dir, uid, gid);
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) chownTree(full, uid, gid);
    else chownSync(full, uid, gid);
  }
}

export interface PrivatePostgres {
  port: number;
  /** URL of a database on this cluster (the maintenance database when none is named). */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop: `fast` ends sessions with 57P01 (admin_shutdown), `immediate` kills them as a crash would. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start, waiting until it accepts connections. */
  start(): Promise<void>;
  /** Stops the cluster for good and removes its directory. */
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-drill-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  if (isRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const uid = Number(stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownTree(dir, uid, gid);
  }
  const port = await freePort();
  await asPostgres(postgresBin('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const options = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses='127.0.0.1'", '-c max_connections=200', '-c fsync=off', '-c full_page_writes=off', '-c shared_buffers=64MB'].join(' ');
  const pgCtl = postgresBin('pg_ctl');
  const start = () => asPostgres(pgCtl, ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']).then(() => undefined);
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  await start();
  return {
    port,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop(mode = 'fast') {
      await asPostgres(pgCtl, ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    start,
    async destroy() {
      await asPostgres(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  port: number;
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** redis-server on a free port, without persistence. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-drill-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}/0`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    url,
    process: child,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
