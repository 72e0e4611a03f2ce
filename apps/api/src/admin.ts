import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { isUnavailableError, loadConfig } from '@sdx/config';
import { createDb, type Db, pendingMigrations } from '@sdx/db';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import {
  createApiKey,
  createWorkspace,
  deleteWorkspace,
  exportWorkspaceLines,
  findWorkspace,
  grantCredits,
  issuePasswordResetLink,
  listAllWorkspaces,
  listApiKeys,
  type MoveProgress,
  moveResults,
  BucketResultObjects,
  reconcileCounters,
  recordAudit,
  renderApiKey,
  resealSecrets,
  revokeApiKey,
  systemActor,
  systemClock,
  verifyEmailByOperator,
} from '@sdx/domain/api';

/**
 * Admin CLI (decisions.md "Operations contract"):
 *   npm run -s admin -- create-workspace --name N [--credits C] [--rate-limit R] [--max-active-jobs A] [--max-result-limit M] --json
 *   npm run -s admin -- create-key --workspace ID --json
 *   npm run -s admin -- revoke-key --key-id ID
 *   npm run -s admin -- grant-credits --workspace ID --credits N [--kind purchased|promotional] [--expires-at ISO]
 *   npm run -s admin -- list-workspaces [--json]
 *   npm run -s admin -- list-keys --workspace ID [--json]
 *   npm run -s admin -- rotate-secrets [--json]
 *   npm run -s admin -- export-workspace <workspace_id> [--out FILE]
 *   npm run -s admin -- delete-workspace <workspace_id> [--yes] [--json]
 *   npm run -s admin -- move-results --to s3|postgres [--batch N] [--json]
 *   npm run -s admin -- reconcile-counters [--json]
 *   npm run -s admin -- reset-password <email> [--json]
 *   npm run -s admin -- verify-email <email> [--json]
 * The key secret is printed once, here, and never stored. Keys made here have the owner role;
 * every change is in the workspace's audit log with the actor system/admin-cli.
 * rotate-secrets re-seals every secret at rest that is not under SECRETS_KEY (opened with
 * SECRETS_KEY_PREVIOUS), the third step of a key rotation (docs/deployment.md); it exits 1 when
 * some value opens under neither key.
 * export-workspace writes what the service holds of a workspace as NDJSON, one record per line
 * with its `type` (workspace, balance, member, invitation, key, job, ledger, audit; no secret or
 * hash), to FILE or standard output. delete-workspace deletes the workspace's data everywhere
 * (Postgres, the result store, Redis) and records the deletion in workspace_deletions, which
 * survives it; without --yes it only says what it would delete (exit 2). See docs/operations.md.
 * move-results moves the stored results of completed jobs into the object store (S3_*) or back
 * into Postgres while the service runs, a batch of jobs at a time, with a progress bar on standard
 * error; stopped anywhere, it is resumed by running it again. Set RESULT_STORE to the same store
 * on the service first, so that new results are written there (docs/operations.md).
 *
 * reconcile-counters recomputes every stored aggregate of the money (each workspace's reserved
 * totals, lifetime spend, purchased balance and month spend, each key's month spend) from the
 * reservations and the ledger and sets those that differ: the contract step of an upgrade, run
 * once every process runs the new release (docs/deployment.md "Expand and contract"). It prints
 * each counter it mended.
 *
 * reset-password prints a one-time password-reset link for the user (valid one hour, as a mailed
 * one), for a service that sends no mail or a user whose mail does not arrive; verify-email marks
 * the user's email verified (the personal workspace receives its allowance, as with the link).
 * Both are audited in the user's personal workspace with the actor system/admin-cli.
 *
 * It works on the service's existing database only: unreachable, missing or not fully migrated,
 * it refuses with the reason (exit 3) and creates or migrates nothing.
 */
const USAGE = `usage: admin <create-workspace|create-key|revoke-key|grant-credits|list-workspaces|list-keys|rotate-secrets|export-workspace|delete-workspace|move-results|reconcile-counters|reset-password|verify-email> [options]`;
const COMMANDS = [
  'create-workspace',
  'create-key',
  'revoke-key',
  'grant-credits',
  'list-workspaces',
  'list-keys',
  'rotate-secrets',
  'export-workspace',
  'delete-workspace',
  'move-results',
  'reconcile-counters',
  'reset-password',
  'verify-email',
];
/** The commands that take an argument: the workspace's ID, or the user's email. */
const WITH_ARGUMENT = ['export-workspace', 'delete-workspace', 'reset-password', 'verify-email'];
const ACTOR = systemActor('admin-cli');

class UsageError extends Error {}
/** The database is not one the CLI can work on; the message says why and what to do. */
class EnvironmentError extends Error {}

/** The database URL without its password, for messages. */
function describeUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    url.password = '';
    return url.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}

async function requireMigratedDatabase(db: Db, connectionString: string, fromEnv: boolean): Promise<void> {
  const where = `${describeUrl(connectionString)}${fromEnv ? '' : ' (DATABASE_URL is not set; this is the default)'}`;
  let pending: string[];
  try {
    pending = await pendingMigrations(db);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000')
      throw new EnvironmentError(
        `database ${where} does not exist; set DATABASE_URL to the service's database, or create it with \`npm run migrate\``,
      );
    if (isUnavailableError(error) || code === '28P01' || code === '28000') {
      throw new EnvironmentError(`cannot reach the database ${where}: ${(error as Error).message}`);
    }
    throw error;
  }
  if (pending.length > 0) {
    throw new EnvironmentError(
      `database ${where} is not migrated (${pending.length} pending: ${pending.join(', ')}); run \`npm run migrate\` first`,
    );
  }
}

function positiveInt(name: string, value: string | undefined, required = false): number | undefined {
  if (value === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number`);
  return n;
}

function required(name: string, value: string | undefined): string {
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      credits: { type: 'string' },
      'rate-limit': { type: 'string' },
      'max-active-jobs': { type: 'string' },
      'max-result-limit': { type: 'string' },
      workspace: { type: 'string' },
      'key-id': { type: 'string' },
      kind: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      yes: { type: 'boolean', default: false },
      to: { type: 'string' },
      batch: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
  if (!COMMANDS.includes(command ?? '')) throw new UsageError(USAGE);
  if (positionals.length > (WITH_ARGUMENT.includes(command) ? 1 : 0)) throw new UsageError(`unexpected argument ${positionals.at(-1)}`);
  const config = loadConfig();
  const db = createDb({ connectionString: config.databaseUrl, max: 2, applicationName: 'admin' });
  const print = (payload: object, text: string) => {
    process.stdout.write(values.json ? `${JSON.stringify(payload)}\n` : `${text}\n`);
  };
  try {
    await requireMigratedDatabase(db, config.databaseUrl, Boolean(process.env.DATABASE_URL));
    switch (command) {
      case 'create-workspace': {
        const name = required('name', values.name);
        const created = await db.transaction().execute(async (tx) => {
          const workspace = await createWorkspace(tx, systemClock, {
            name,
            credits: positiveInt('credits', values.credits),
            rateLimitPerMinute: positiveInt('rate-limit', values['rate-limit']),
            maxActiveJobs: positiveInt('max-active-jobs', values['max-active-jobs']),
            maxResultLimit: positiveInt('max-result-limit', values['max-result-limit']),
          });
          await recordAudit(tx, {
            workspaceId: workspace.id,
            action: 'workspace.created',
            actor: ACTOR,
            targetType: 'workspace',
            targetId: workspace.id,
            data: { name },
          });
          const key = await createApiKey(tx, workspace.id, 'admin', { role: 'owner', actor: ACTOR });
          return { workspace_id: workspace.id, key_id: key.key_id, api_key: key.api_key };
        });
        print(created, `workspace ${created.workspace_id}\nkey ${created.key_id}\napi key (shown once): ${created.api_key}`);
        return 0;
      }
      case 'create-key': {
        const workspaceId = required('workspace', values.workspace);
        if (!(await findWorkspace(db, workspaceId))) throw new UsageError(`no workspace ${workspaceId}`);
        const key = await createApiKey(db, workspaceId, 'admin', { role: 'owner', actor: ACTOR });
        print({ key_id: key.key_id, api_key: key.api_key }, `key ${key.key_id}\napi key (shown once): ${key.api_key}`);
        return 0;
      }
      case 'revoke-key': {
        const keyId = required('key-id', values['key-id']);
        if (!(await revokeApiKey(db, keyId, { actor: ACTOR }))) throw new UsageError(`no key ${keyId}`);
        print({ key_id: keyId, revoked: true }, `key ${keyId} revoked`);
        return 0;
      }
      case 'grant-credits': {
        const workspaceId = required('workspace', values.workspace);
        const credits = positiveInt('credits', values.credits, true)!;
        if (credits <= 0) throw new UsageError('--credits must be positive');
        const kind = values.kind ?? 'purchased';
        if (kind !== 'purchased' && kind !== 'promotional') throw new UsageError('--kind is purchased or promotional');
        let expiresAt: Date | null = null;
        if (values['expires-at']) {
          expiresAt = new Date(values['expires-at']);
          if (Number.isNaN(expiresAt.getTime())) throw new UsageError('--expires-at must be an ISO 8601 date-time');
        }
        const workspace = await findWorkspace(db, workspaceId);
        if (!workspace) throw new UsageError(`no workspace ${workspaceId}`);
        await db.transaction().execute(async (tx) => {
          await grantCredits(tx, workspace, new Date(), { credits, kind, expiresAt, note: 'admin grant' });
          await recordAudit(tx, {
            workspaceId,
            action: 'credits.granted',
            actor: ACTOR,
            targetType: 'workspace',
            targetId: workspaceId,
            data: { credits, kind, expires_at: expiresAt?.toISOString() ?? null },
          });
        });
        print(
          { workspace_id: workspaceId, credits, kind, expires_at: expiresAt?.toISOString() ?? null },
          `granted ${credits} ${kind} credits to ${workspaceId}`,
        );
        return 0;
      }
      case 'list-workspaces': {
        const workspaces = await listAllWorkspaces(db);
        print(
          workspaces,
          workspaces.length === 0
            ? 'no workspaces'
            : workspaces
                .map(
                  (w) =>
                    `${w.id}  ${w.kind.padEnd(8)}  ${w.name}  owners: ${w.owners.join(', ') || '-'}  members: ${w.member_count}  active keys: ${w.active_key_count}`,
                )
                .join('\n'),
        );
        return 0;
      }
      case 'list-keys': {
        const workspaceId = required('workspace', values.workspace);
        if (!(await findWorkspace(db, workspaceId))) throw new UsageError(`no workspace ${workspaceId}`);
        const keys = (await listApiKeys(db, workspaceId)).map(renderApiKey);
        const state = (k: (typeof keys)[number]) =>
          k.revoked_at
            ? `revoked ${k.revoked_at}`
            : k.expires_at && Date.parse(k.expires_at) <= Date.now()
              ? `expired ${k.expires_at}`
              : 'active';
        print(
          keys,
          keys.length === 0
            ? `no keys in ${workspaceId}`
            : keys
                .map(
                  (k) => `${k.id}  ${k.prefix}…  ${k.role.padEnd(6)}  ${k.name ?? ''}  ${state(k)}  last used ${k.last_used_at ?? 'never'}`,
                )
                .join('\n'),
        );
        return 0;
      }
      case 'rotate-secrets': {
        const reports = await resealSecrets(db, config);
        const unopenable = reports.reduce((n, r) => n + r.unopenable, 0);
        print(
          { columns: reports, unopenable },
          [
            ...reports.map(
              (r) =>
                `${r.table}.${r.column}: ${r.resealed} re-sealed${r.unopenable ? `, ${r.unopenable} open under neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS` : ''}`,
            ),
            unopenable
              ? 'some values were left as they are: set SECRETS_KEY_PREVIOUS to the key that sealed them and run rotate-secrets again'
              : 'every sealed value is under SECRETS_KEY',
          ].join('\n'),
        );
        return unopenable ? 1 : 0;
      }
      case 'reconcile-counters': {
        const counters = await reconcileCounters(db);
        print(
          counters,
          [
            ...counters.fixes.map((f) => `${f.workspace_id}${f.key_id ? ` key ${f.key_id}` : ''} ${f.counter}: ${f.was} -> ${f.now}`),
            `${counters.workspaces} balances checked, ${counters.fixes.length} counters mended`,
          ].join('\n'),
        );
        return 0;
      }
      case 'export-workspace': {
        const workspaceId = required('workspace_id', positionals[0]);
        if (!(await findWorkspace(db, workspaceId))) throw new UsageError(`no workspace ${workspaceId}`);
        const out = values.out ? createWriteStream(values.out) : process.stdout;
        for await (const line of exportWorkspaceLines(db, workspaceId)) {
          if (!out.write(line)) await once(out, 'drain');
        }
        if (values.out) {
          out.end();
          await once(out, 'finish');
        }
        return 0;
      }
      case 'reset-password': {
        const email = positionals[0];
        if (!email) throw new UsageError('usage: admin reset-password <email>');
        const issued = await issuePasswordResetLink({ db, config, clock: systemClock }, email, ACTOR);
        if (!issued) throw new UsageError(`no user ${email}`);
        print(
          { email, reset_url: issued.link, expires_at: issued.expiresAt.toISOString() },
          `One-time password reset link for ${email} (valid until ${issued.expiresAt.toISOString()}, works once):\n${issued.link}`,
        );
        return 0;
      }
      case 'verify-email': {
        const email = positionals[0];
        if (!email) throw new UsageError('usage: admin verify-email <email>');
        if (!(await verifyEmailByOperator({ db, config, clock: systemClock }, email, ACTOR))) throw new UsageError(`no user ${email}`);
        print({ email, verified: true }, `${email} is verified; its user can sign in.`);
        return 0;
      }
      case 'delete-workspace':
        return await deleteWorkspaceCommand(db, config, required('workspace_id', positionals[0]), values.yes, print);
      case 'move-results': {
        const to = required('to', values.to);
        if (to !== 's3' && to !== 'postgres') throw new UsageError('--to is s3 or postgres');
        if (!config.s3)
          throw new UsageError(
            'move-results needs the object store: set S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT)',
          );
        const batch = positiveInt('batch', values.batch) ?? 50;
        if (batch < 1) throw new UsageError('--batch must be at least 1');
        const resultObjects = BucketResultObjects.of(config.s3);
        const stopping = new AbortController();
        const interrupt = () => stopping.abort();
        process.once('SIGINT', interrupt);
        process.once('SIGTERM', interrupt);
        try {
          const log = pino({ level: 'warn' }, pino.destination(2));
          const moved = await moveResults({ db, resultObjects, log }, to, { batch, signal: stopping.signal, onProgress: progressBar(to) });
          process.stderr.write('\n');
          const what = `${moved.moved} of ${moved.total} jobs' results moved to ${to} (${moved.pages} pages, ${moved.bytes} bytes)`;
          print(
            { to, ...moved, interrupted: stopping.signal.aborted },
            stopping.signal.aborted ? `${what}; interrupted: run it again to go on` : what,
          );
          return stopping.signal.aborted ? 1 : 0;
        } finally {
          resultObjects.close();
          process.off('SIGINT', interrupt);
          process.off('SIGTERM', interrupt);
        }
      }
      default:
        throw new UsageError(USAGE);
    }
  } finally {
    await db.destroy();
  }
}

/** A progress bar on standard error for move-results: redrawn in place on a terminal, a line per batch otherwise. */
function progressBar(to: string): (progress: MoveProgress) => void {
  const tty = process.stderr.isTTY;
  return ({ total, moved, pages }) => {
    const share = total === 0 ? 1 : Math.min(1, moved / total);
    const width = 30;
    const filled = Math.round(share * width);
    const line = `moving results to ${to} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.round(share * 100)}% ${moved}/${total} jobs, ${pages} pages`;
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
}

/**
 * delete-workspace: with --yes, deletes it (a runtime of its own: the result store and Redis);
 * without, says what would go and deletes nothing.
 */
async function deleteWorkspaceCommand(
  db: Db,
  config: ReturnType<typeof loadConfig>,
  workspaceId: string,
  yes: boolean,
  print: (payload: object, text: string) => void,
): Promise<number> {
  const workspace = await findWorkspace(db, workspaceId);
  if (!workspace) throw new UsageError(`no workspace ${workspaceId}`);
  if (!yes) {
    const jobs = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    throw new UsageError(
      `would delete workspace ${workspaceId} (${workspace.name}) and all its data (${jobs.n} jobs); nothing deleted: run again with --yes`,
    );
  }
  const runtime = createRuntime(config, { name: 'admin', dbPoolSize: 2, log: pino({ level: 'warn' }, pino.destination(2)) });
  try {
    await untilRedisReady(runtime);
    const outcome = await deleteWorkspace(runtime.services, runtime.redis, workspaceId, ACTOR);
    if ('refused' in outcome) {
      throw new UsageError(
        outcome.refused === 'personal'
          ? `workspace ${workspaceId} is a personal workspace: it goes with its user's account`
          : `no workspace ${workspaceId}`,
      );
    }
    const { deleted } = outcome;
    const rows = Object.values(deleted.rows).reduce((a, b) => a + (b ?? 0), 0);
    print(
      {
        deletion_id: deleted.id,
        workspace_id: workspaceId,
        rows: deleted.rows,
        queue_entries: deleted.queueEntries,
        redis_keys: deleted.redisKeys,
      },
      `workspace ${workspaceId} deleted: ${rows} rows (${Object.entries(deleted.rows)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}), ${deleted.queueEntries} queue entries, ${deleted.redisKeys} Redis keys; recorded as ${deleted.id}`,
    );
    return 0;
  } finally {
    await runtime.close();
  }
}

main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : error instanceof EnvironmentError ? 3 : 1);
  });
