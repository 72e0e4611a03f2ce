import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { ensureConsoleBuild } from '@sdx/console';
import { createLogger, loadConfig, nodeHeapArgs } from '@sdx/config';
import { createDb, ensureDatabase, migrateToLatest } from '@sdx/db';
import {
  addMember,
  countWorkspaces,
  createApiKey,
  createUser,
  createWorkspace,
  hashPassword,
  randomToken,
  recordAudit,
  setDefaultWorkspace,
  systemActor,
  systemClock,
} from '@sdx/domain/testing';

/**
 * `npm start`: builds the web console when its build is missing or older than its sources,
 * migrates the database, then runs the api, worker and scheduler as three processes
 * against DATABASE_URL and REDIS_URL, each with a heap bound of MAX_HEAP_MB, and restarts any
 * of them that exits unexpectedly (with a backoff: 0.5 s, doubling up to 30 s while it keeps
 * dying young). On first start against an empty database (not in production) it creates a
 * demo workspace owned by a demo user (demo@example.com, with a personal workspace of their
 * own, the demo workspace being the one the console opens for them) and prints the workspace's API key and the user's random password once.
 */
const ROOT = path.resolve(__dirname, '..');
const APPS = ['api', 'worker', 'scheduler'] as const;
const DEMO_CREDITS = 100_000;
const DEMO_EMAIL = 'demo@example.com';

async function prepare(): Promise<void> {
  const config = loadConfig();
  const log = createLogger({ logLevel: config.logLevel }, { name: 'start' });
  await ensureDatabase(config.databaseUrl);
  const db = createDb({ connectionString: config.databaseUrl, max: 2, applicationName: 'start' });
  try {
    const applied = await migrateToLatest(db);
    log.info({ applied }, applied.length ? 'migrations applied' : 'database schema is up to date');
    if (config.seedDemo && (await countWorkspaces(db)) === 0) {
      const actor = systemActor('start');
      const password = randomToken(12);
      const passwordHash = await hashPassword(password);
      const key = await db.transaction().execute(async (tx) => {
        const workspace = await createWorkspace(tx, systemClock, { name: 'Demo workspace', credits: DEMO_CREDITS });
        await recordAudit(tx, {
          workspaceId: workspace.id,
          action: 'workspace.created',
          actor,
          targetType: 'workspace',
          targetId: workspace.id,
          data: { name: workspace.name },
        });
        const { user } = await createUser(
          tx,
          systemClock,
          { email: DEMO_EMAIL, passwordHash, displayName: 'Demo', credits: config.newWorkspaceCredits },
          { ip: null, actor },
        );
        await addMember(tx, workspace.id, user.id, 'owner', actor);
        // Signing in as the demo user opens the demo workspace, not their personal one.
        await setDefaultWorkspace(tx, user.id, workspace.id);
        return { workspace, ...(await createApiKey(tx, workspace.id, 'demo', { role: 'owner', actor })) };
      });
      const base = `http://localhost:${config.port}`;
      process.stdout.write(
        [
          '',
          `Demo workspace ${key.workspace.id} created with ${DEMO_CREDITS} credits.`,
          `API key (shown once, keep it): ${key.api_key}`,
          `Try: curl -H "X-API-Key: ${key.api_key}" ${base}/v1/account`,
          '',
          `Demo user (owner of the demo workspace): ${DEMO_EMAIL}`,
          `Password (shown once, keep it): ${password}`,
          `Try: curl -c jar -H 'Content-Type: application/json' -d '{"email":"${DEMO_EMAIL}","password":"${password}"}' ${base}/v1/auth/login`,
          `     curl -b jar -H "X-Workspace-ID: ${key.workspace.id}" ${base}/v1/account`,
          `Or sign in to the web console: ${base}/console`,
          '',
        ].join('\n') + '\n',
      );
    } else if (config.seedDemo) {
      // A second start: the key was printed once, on the first; say how to get one again.
      const base = `http://localhost:${config.port}`;
      process.stdout.write(
        [
          '',
          'The database has its workspaces already; the demo API key and password were shown on the first start only.',
          `A new API key: sign in to ${base}/console and make one under "API keys", or run`,
          '  npm run -s admin -- list-workspaces                 # the workspace IDs',
          '  npm run -s admin -- create-key --workspace <ws_id>  # a new owner key, shown once',
          `Forgot the demo password? npm run -s admin -- reset-password ${DEMO_EMAIL}`,
          '',
        ].join('\n') + '\n',
      );
    }
  } finally {
    await db.destroy();
  }
}

/**
 * Prints one "Ready" line once the API answers /readyz, whatever the output is (a terminal, a
 * pipe or a file), so that a person or a script knows when to begin.
 */
async function announceReady(port: number, isStopping: () => boolean): Promise<void> {
  const started = Date.now();
  while (!isStopping()) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) {
        const base = `http://localhost:${port}`;
        process.stdout.write(
          `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${base} (console ${base}/console, API reference ${base}/docs)\n`,
        );
        return;
      }
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function run(app: (typeof APPS)[number], nodeArgs: readonly string[]): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(ROOT, 'apps', app, 'src', 'main.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
    env: process.env,
  });
}

/** First restart delay after an unexpected exit; doubled after each quick exit, up to the cap. */
const RESTART_BASE_MS = 500;
const RESTART_CAP_MS = 30_000;
/** A child that ran this long is considered healthy: its next restart starts from the base delay again. */
const HEALTHY_AFTER_MS = 60_000;

/**
 * Delay before restarting a child that exited after running `ranMs`, given the delay used for
 * its previous restart (0 if none).
 */
export function nextRestartDelay(previousMs: number, ranMs: number): number {
  if (previousMs === 0 || ranMs >= HEALTHY_AFTER_MS) return RESTART_BASE_MS;
  return Math.min(previousMs * 2, RESTART_CAP_MS);
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger({ logLevel: config.logLevel }, { name: 'start' });
  const consoleBuild = await ensureConsoleBuild();
  log.info({ built: consoleBuild.built, ms: consoleBuild.ms }, consoleBuild.built ? 'console built' : 'console build is up to date');
  await prepare();
  // The API waits up to SYNC_TIMEOUT_MS (plus a margin) for its last responses on SIGTERM.
  const shutdownGraceMs = Math.max(20_000, config.syncTimeoutMs + 10_000);
  const nodeArgs = nodeHeapArgs(config);
  const children = new Map<string, ChildProcess>();
  const timers = new Set<NodeJS.Timeout>();
  let stopping = false;

  const stopAll = (signal: NodeJS.Signals, code: number) => {
    if (stopping) return;
    stopping = true;
    for (const timer of timers) clearTimeout(timer);
    for (const child of children.values()) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const force = setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
      process.exit(code || 1);
    }, shutdownGraceMs);
    force.unref();
    const wait = () => {
      if ([...children.values()].every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(code);
      else setTimeout(wait, 50);
    };
    wait();
  };

  // A child that exits while the service is not stopping is restarted after a backoff delay;
  // the other two keep serving meanwhile.
  const supervise = (app: (typeof APPS)[number], previousDelayMs: number, restarts: number) => {
    const startedAt = Date.now();
    const child = run(app, nodeArgs);
    children.set(app, child);
    child.on('exit', (code, signal) => {
      if (stopping) return;
      const delayMs = nextRestartDelay(previousDelayMs, Date.now() - startedAt);
      log.warn(
        { app, pid: child.pid, exit: signal ?? code, restarts: restarts + 1, restartInMs: delayMs },
        `${app} exited unexpectedly; restarting`,
      );
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopping) supervise(app, delayMs, restarts + 1);
      }, delayMs);
      timers.add(timer);
    });
  };
  for (const app of APPS) supervise(app, 0, 0);
  void announceReady(config.port, () => stopping);
  process.on('SIGTERM', () => stopAll('SIGTERM', 0));
  process.on('SIGINT', () => stopAll('SIGTERM', 0));
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
