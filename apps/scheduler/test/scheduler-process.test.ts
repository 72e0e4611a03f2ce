import { type ChildProcess, spawn } from 'child_process';
import path from 'path';
import { sql } from 'kysely';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * The scheduler app as a process (apps/scheduler/src/main.ts under tsx, as `npm start` runs it)
 * against the test database, with a worker in the test: a once schedule dispatches a job that
 * completes, a paused daily schedule dispatches nothing, the retention purge expires a result past
 * RESULT_RETENTION_DAYS and deletes an expired idempotency record, SIGTERM stops the process
 * cleanly.
 */
let stack: TestStack;
let proc: ChildProcess | null = null;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  await stack.close();
});

const ROOT = path.resolve(__dirname, '../../..');

function startScheduler(): ChildProcess {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), [path.join(ROOT, 'apps/scheduler/src/main.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: stack.databaseUrl,
      REDIS_URL: stack.config.redisUrl,
      REDIS_PREFIX: stack.config.redisPrefix,
      SCHEDULER_TICK_MS: '100',
      RESULT_RETENTION_DAYS: '2',
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

it('dispatches a due once schedule into a job that completes, skips a paused one, runs the retention purge, and stops on SIGTERM', async () => {
  const ws = await stack.workspace({ credits: 100, rateLimitPerMinute: 100_000 });
  const startsAt = new Date(Date.now() + 1500);
  const once = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'once',
      operation: 'profile',
      targets: ['nasa'],
      frequency: 'once',
      timezone: 'Europe/Berlin',
      starts_at: startsAt.toISOString(),
    },
  });
  expect(once.status).toBe(201);
  const paused = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'paused',
      operation: 'profile',
      targets: ['esa'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: startsAt.toISOString(),
    },
  });
  expect((await stack.api.post(`/v1/schedules/${paused.body.id}/pause`, { headers: ws.auth })).status).toBe(200);

  // An idempotency record that expired an hour ago: the scheduler's purge deletes it at start.
  const expired = new Date(Date.now() - 3_600_000);
  await stack.runtime.db
    .insertInto('idempotency_keys')
    .values({
      workspace_id: ws.workspaceId,
      endpoint: 'POST /v1/jobs',
      key: 'expired-key',
      request_hash: 'hash',
      resource_type: 'job',
      resource_id: 'job_expired',
      created_at: new Date(expired.getTime() - 86_400_000),
      expires_at: expired,
    })
    .execute();
  // A result finished three days ago, kept two days (RESULT_RETENTION_DAYS=2): the purge expires it.
  await sql`
    insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits, finished_at)
    values ('job_old_result', ${ws.workspaceId}, 'instagram', 'profile', 'old', 'old', 'old', 1, 'completed', 4, 1, 1, 0, now() - interval '3 days')
  `.execute(stack.runtime.db);
  await sql`insert into job_result_pages (job_id, page_no, item_count, items) values ('job_old_result', 0, 1, '[{"id": "1"}]')`.execute(
    stack.runtime.db,
  );

  proc = startScheduler();
  const exited = new Promise<number | null>((resolve) => proc!.on('exit', (code) => resolve(code)));

  const view = await eventually(async () => {
    const res = await stack.api.get(`/v1/schedules/${once.body.id}`, { headers: ws.auth });
    return res.body.runs.length > 0 && res.body.runs[0].job_id ? res.body : null;
  }, 30_000);
  expect(view).toMatchObject({ status: 'completed', next_run_at: null });
  expect(view.runs[0]).toMatchObject({ trigger: 'scheduled', status: 'queued', scheduled_for: new Date(startsAt).toISOString() });
  expect(new Date(view.runs[0].created_at).getTime()).toBeGreaterThanOrEqual(startsAt.getTime());
  const job = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${view.runs[0].job_id}`, { headers: ws.auth });
    return res.body.status === 'completed' ? res.body : null;
  }, 20_000);
  expect(job).toMatchObject({ target: 'nasa', result_count: 1, billed_credits: 1 });

  await eventually(async () => {
    const left = await stack.runtime.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'expired-key').execute();
    return left.length === 0;
  }, 10_000);
  const old = await stack.api.get('/v1/jobs/job_old_result', { headers: ws.auth });
  expect(old.body).toMatchObject({ status: 'completed', result: null, result_expired: true });
  expect(await stack.runtime.db.selectFrom('job_result_pages').select('page_no').where('job_id', '=', 'job_old_result').execute()).toEqual(
    [],
  );

  const pausedView = await stack.api.get(`/v1/schedules/${paused.body.id}`, { headers: ws.auth });
  expect(pausedView.body).toMatchObject({ status: 'paused', runs: [], last_run_at: null });

  proc.kill('SIGTERM');
  expect(await exited).toBe(0);
});
