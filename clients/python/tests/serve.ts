/**
 * The service the Python SDK's tests (and bench/python) run against: a served test stack
 * (@sdx/testing's startServedStack: real API, real worker, real Postgres and Redis, the sandbox
 * upstream), started by pytest's session fixture as a child process.
 *
 * Protocol, one JSON object per line:
 * - stdout, first line: `{"url": "http://127.0.0.1:<port>"}` once the stack answers;
 * - stdin: commands `{"id": n, "cmd": ...}`, each answered on stdout by `{"id": n, "ok": ...}` or
 *   `{"id": n, "error": "..."}`:
 *   - `workspace` (`credits`, `rate_limit_per_minute`, `max_active_jobs`, `role`): a fresh workspace
 *     and an API key of `role` (default owner) → `{workspace_id, api_key}`;
 *   - `count` (`table`, `workspace_id`): rows of the workspace in `table`;
 *   - `error_statuses`: the service's closed map of error identifiers to HTTP statuses;
 *   - `monitor_run` (`run_id`): the scheduler's passes over monitors (this stack runs no scheduler)
 *     until the run has ended → its final status;
 *   - `s3`: the loopback S3 started beside the stack, for destinations → `{endpoint, region, bucket,
 *     access_key_id, secret_access_key}` (the bucket exists; the service may write to this
 *     http loopback endpoint: WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE_NETWORKS are set).
 * Closing stdin (or SIGTERM) closes the stack and drops its database.
 *
 * Outside jest (pytest run by hand, the bench) no migrated template exists yet: one is made here
 * and dropped at the end, as jest's globalSetup would.
 */
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { createDb, migrateToLatest } from '@sdx/db';
import { createApiKey, ERROR_STATUS, type Role } from '@sdx/domain/testing';
import { baseDatabaseUrl, countWorkspaceRows, databaseUrlFor, type LoopbackS3, type ServedStack, startLoopbackS3, startServedStack, untilMonitorRunEnds } from '@sdx/testing';

/** The bucket of the loopback S3 that destinations of the tests write to. */
const S3_BUCKET = 'sdx-python';

interface Command {
  id: number;
  cmd: 'workspace' | 'count' | 'error_statuses' | 's3' | 'monitor_run';
  credits?: number;
  rate_limit_per_minute?: number;
  max_active_jobs?: number;
  role?: Role;
  table?: 'jobs' | 'batches' | 'idempotency_keys' | 'credit_reservations' | 'credit_ledger';
  workspace_id?: string;
  run_id?: string;
}

async function adminQuery(statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** A migrated template when jest's globalSetup did not make one; returns how to drop it. */
async function ensureTemplate(): Promise<() => Promise<void>> {
  if (process.env.SDX_TEMPLATE_DB) return () => Promise.resolve();
  const name = `sdx_tpl_py_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const db = createDb({ connectionString: databaseUrlFor(name), max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  process.env.SDX_TEMPLATE_DB = name;
  return () => adminQuery(`drop database if exists ${name} with (force)`);
}

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

async function handle(served: ServedStack, s3: LoopbackS3, command: Command): Promise<unknown> {
  const { stack } = served;
  switch (command.cmd) {
    case 'workspace': {
      const ws = await stack.workspace({
        credits: command.credits ?? 100_000,
        ...(command.rate_limit_per_minute !== undefined ? { rateLimitPerMinute: command.rate_limit_per_minute } : {}),
        ...(command.max_active_jobs !== undefined ? { maxActiveJobs: command.max_active_jobs } : {}),
      });
      if (!command.role || command.role === 'owner') return { workspace_id: ws.workspaceId, api_key: ws.apiKey };
      const key = await createApiKey(stack.runtime.db, ws.workspaceId, `python ${command.role}`, { role: command.role });
      return { workspace_id: ws.workspaceId, api_key: key.api_key };
    }
    case 'count':
      return countWorkspaceRows(stack, command.table ?? 'jobs', command.workspace_id ?? '');
    case 'error_statuses':
      return ERROR_STATUS;
    case 'monitor_run':
      return untilMonitorRunEnds(stack, command.run_id ?? '');
    case 's3':
      return { endpoint: s3.endpoint, region: s3.region, bucket: S3_BUCKET, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey };
  }
}

async function main(): Promise<void> {
  const dropTemplate = await ensureTemplate();
  const s3 = await startLoopbackS3([S3_BUCKET]);
  const served = await startServedStack({
    withWorker: true,
    env: {
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      WEBHOOK_RETRY_SCHEDULE: '0.2,0.2',
      ...(process.env.SDX_SERVE_ENV ? (JSON.parse(process.env.SDX_SERVE_ENV) as Record<string, string>) : {}),
    },
  });
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      try {
        await served.close();
      } finally {
        await s3.stop();
        await dropTemplate();
      }
    })();
    return closing;
  };
  process.on('SIGTERM', () => void close().finally(() => process.exit(0)));
  send({ url: served.url });
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const command = JSON.parse(line) as Command;
    try {
      send({ id: command.id, ok: await handle(served, s3, command) });
    } catch (error) {
      send({ id: command.id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  await close();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
