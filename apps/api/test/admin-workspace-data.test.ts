import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { ensureMonthPartition, recordAudit, systemActor, WORKSPACE_TABLES } from '@sdx/domain/testing';
import { eventually, runAdmin, type SeededWorkspace, startTestStack, type TestStack, waitForJob } from '@sdx/testing';

let stack: TestStack;
let dir: string;
beforeAll(async () => {
  stack = await startTestStack();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-export-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stack.close();
});

async function admin(...args: string[]): Promise<string> {
  const { stdout } = await runAdmin(args, {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.config.redisUrl,
    REDIS_PREFIX: stack.config.redisPrefix,
    LOG_LEVEL: 'silent',
  });
  return stdout;
}

interface Seeded extends SeededWorkspace {
  /** A job still queued (its entry waits in Redis). */
  queuedJobId: string;
  userId: string;
  paymentId: string;
  index: number;
}

let n = 0;
/** A workspace with rows in every table that holds a workspace's data, and Redis keys and entries. */
async function populated(): Promise<Seeded> {
  const db = stack.runtime.db;
  const ws = await stack.workspace({ credits: 100_000 });
  const i = ++n;
  // Through the API: a job with an Idempotency-Key (run to completion: result pages, settlement),
  // a batch, a schedule; each request counted by the rate limiter in Redis.
  const worker = stack.startWorker(2);
  const job = await stack.api.post('/v1/jobs', {
    headers: { ...ws.auth, 'Idempotency-Key': `export-${i}` },
    body: { platform: 'instagram', operation: 'posts', target: `export_${i}`, limit: 5 },
  });
  expect(job.status).toBe(202);
  await waitForJob(stack, ws.auth, job.body.id, (j) => j.status === 'completed');
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', targets: [`batch_${i}_a`, `batch_${i}_b`] },
  });
  expect(batch.status).toBe(202);
  await eventually(async () => {
    const active = await db
      .selectFrom('jobs')
      .select('id')
      .where('workspace_id', '=', ws.workspaceId)
      .where('status', 'in', ['queued', 'running'])
      .execute();
    return active.length === 0;
  });
  await worker.close();
  stack.worker = null;
  const schedule = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'export',
      platform: 'instagram',
      operation: 'profile',
      targets: [`sched_${i}`],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  expect(schedule.status).toBe(201);
  const monitor = await stack.api.post('/v1/monitors', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', targets: [`mon_${i}`], frequency: 'daily' },
  });
  expect(monitor.status).toBe(201);
  // The rest straight into their tables.
  const userId = `usr_export${i}`;
  const paymentId = `pay_export${i}`;
  await sql`insert into users (id, email, password_hash) values (${userId}, ${`member${i}@example.com`}, 'x')`.execute(db);
  await sql`insert into memberships (workspace_id, user_id, role) values (${ws.workspaceId}, ${userId}, 'member')`.execute(db);
  await sql`update users set default_workspace_id = ${ws.workspaceId} where id = ${userId}`.execute(db);
  await sql`insert into invitations (id, workspace_id, email, role, token_hash, expires_at) values (${`inv_export${i}`}, ${ws.workspaceId}, ${`invitee${i}@example.com`}, 'viewer', ${`invhash${i}`}, now() + interval '1 day')`.execute(
    db,
  );
  await sql`insert into oauth_clients (id, redirect_uris, metadata) values (${`cli_export${i}`}, array['https://app.example.com/cb'], '{}')`.execute(
    db,
  );
  await sql`insert into oauth_codes (code_hash, client_id, key_id, user_id, workspace_id, role, redirect_uri, code_challenge, expires_at)
            values (${`code${i}`}, ${`cli_export${i}`}, ${ws.keyId}, ${userId}, ${ws.workspaceId}, 'member', 'https://app.example.com/cb', 'c', now() + interval '1 minute')`.execute(
    db,
  );
  await sql`insert into oauth_tokens (token_hash, key_id, kind, expires_at) values (${`tokhash${i}`}, ${ws.keyId}, 'access', now() + interval '1 hour')`.execute(
    db,
  );
  await sql`insert into billing_customers (workspace_id, stripe_customer_id) values (${ws.workspaceId}, ${`cus_${i}`})`.execute(db);
  await sql`insert into billing_payments (id, workspace_id, kind, pack_id, credits, amount, currency, payment_intent_id) values (${paymentId}, ${ws.workspaceId}, 'checkout', 'pack_small', 100, 500, 'usd', ${`pi_export${i}`})`.execute(
    db,
  );
  await sql`insert into stripe_held_events (event_id, payment_intent_id, type, object) values (${`evt_held${i}`}, ${`pi_export${i}`}, 'charge.refunded', '{}')`.execute(
    db,
  );
  await sql`insert into stripe_events (id, type, outcome, payment_id) values (${`evt_stripe${i}`}, 'checkout.session.completed', 'ignored', ${paymentId})`.execute(
    db,
  );
  await sql`insert into workspace_plans (workspace_id, plan_id) values (${ws.workspaceId}, 'starter')`.execute(db);
  await sql`insert into billing_subscriptions (id, workspace_id, plan_id, status) values (${`sub_${i}`}, ${ws.workspaceId}, 'starter', 'active')`.execute(
    db,
  );
  await sql`insert into billing_invoices (id, workspace_id, subscription_id, status, currency, created_at) values (${`in_${i}`}, ${ws.workspaceId}, ${`sub_${i}`}, 'paid', 'usd', now())`.execute(
    db,
  );
  await sql`insert into destinations (id, workspace_id, name, type, bucket, region, access_key_id, secret_access_key, format)
            values (${`dst_export${i}`}, ${ws.workspaceId}, 'bucket', 's3', 'b', 'eu-west-1', 'AKIA', 'sealed:v1:x', 'ndjson')`.execute(db);
  await sql`insert into job_attempt_sources (job_id, attempt, seq, source, provider, outcome) values (${job.body.id}, 1, 1, 'official', 'instagram-official', 'served')`.execute(
    db,
  );
  const set = await sql<{
    id: string;
  }>`insert into delivery_sets (schedule_id, platform, operation, target) values (${schedule.body.id}, 'instagram', 'profile', 'x') returning id`.execute(
    db,
  );
  await sql`insert into delivered_items (set_id, item_hash) values (${set.rows[0].id}, 42)`.execute(db);
  await sql`insert into schedule_runs (id, schedule_id, workspace_id, trigger, scheduled_for, status) values (${`run_export${i}`}, ${schedule.body.id}, ${ws.workspaceId}, 'manual', now(), 'queued')`.execute(
    db,
  );
  await sql`insert into monitor_runs (id, monitor_id, workspace_id, trigger, scheduled_for, targets, requested_limit, status)
            values (${`mrn_export${i}`}, ${monitor.body.id}, ${ws.workspaceId}, 'manual', now(), '["x"]', 1, 'queued')`.execute(db);
  await ensureMonthPartition(db, new Date());
  await sql`insert into monitor_points (monitor_id, workspace_id, target, item_id, metric, at, value, run_id)
            values (${monitor.body.id}, ${ws.workspaceId}, ${`mon_${i}`}, '', 'followers_count', now(), 1, ${`mrn_export${i}`})`.execute(
    db,
  );
  await sql`insert into monitor_series (monitor_id, workspace_id, target, item_id, metric, value, at)
            values (${monitor.body.id}, ${ws.workspaceId}, ${`mon_${i}`}, '', 'followers_count', 1, now())`.execute(db);
  await sql`insert into monitor_changes (id, monitor_id, workspace_id, run_id, target, item_id, kind, field, before, after, change_pct, at)
            values (${`mch_export${i}`}, ${monitor.body.id}, ${ws.workspaceId}, ${`mrn_export${i}`}, ${`mon_${i}`}, null, 'metric_changed', 'followers_count', '1', '2', 100, now())`.execute(
    db,
  );
  await sql`insert into monitor_fields (monitor_id, workspace_id, target, field, value) values (${monitor.body.id}, ${ws.workspaceId}, ${`mon_${i}`}, 'bio', '"x"')`.execute(
    db,
  );
  await sql`insert into monitor_items (monitor_id, workspace_id, target, item_id) values (${monitor.body.id}, ${ws.workspaceId}, ${`mon_${i}`}, 'item_1')`.execute(
    db,
  );
  await sql`insert into webhooks (id, workspace_id, url, events, secret) values (${`whk_export${i}`}, ${ws.workspaceId}, 'https://hooks.example.com/x', array['job.completed'], 'sealed:v1:x')`.execute(
    db,
  );
  await sql`insert into webhook_events (id, workspace_id, type) values (${`evt_export${i}`}, ${ws.workspaceId}, 'job.completed')`.execute(
    db,
  );
  await sql`insert into webhook_deliveries (id, webhook_id, event_id, workspace_id) values (${`dlv_export${i}`}, ${`whk_export${i}`}, ${`evt_export${i}`}, ${ws.workspaceId})`.execute(
    db,
  );
  await db.transaction().execute((tx) =>
    recordAudit(tx, {
      workspaceId: ws.workspaceId,
      action: 'workspace.created',
      actor: systemActor('test'),
      targetType: 'workspace',
      targetId: ws.workspaceId,
    }),
  );
  return { ...ws, queuedJobId: '', userId, paymentId, index: i };
}

/**
 * What waits in Redis, added once no worker runs: a queued job's entry and a webhook delivery's
 * (the rate limiter's key is there from the requests).
 */
async function withPending(ws: Seeded): Promise<Seeded> {
  const queued = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: `queued_${ws.index}` },
  });
  expect(queued.status).toBe(202);
  await stack.runtime.queues.idle();
  await stack.runtime.queues.enqueueDeliveries([{ deliveryId: `dlv_export${ws.index}`, webhookId: `whk_export${ws.index}`, attempt: 1 }]);
  return { ...ws, queuedJobId: queued.body.id };
}

/** The rows of each table that belong to the workspace: by workspace_id, or through the rows they hang off. */
async function rowsOf(ws: Seeded, ids: { jobs: string[]; schedules: string[]; keys: string[] }): Promise<Record<string, number>> {
  const db = stack.runtime.db;
  const out: Record<string, number> = {};
  const count = async (table: string, where: ReturnType<typeof sql>) =>
    (out[table] = Number(
      (await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`.execute(db)).rows[0].n,
    ));
  const { rows: keyed } = await sql<{
    table_name: string;
  }>`select table_name from information_schema.columns where column_name = 'workspace_id' and table_schema = current_schema()`.execute(db);
  // workspace_deletions is the record that survives the deletion (checked on its own).
  for (const { table_name } of keyed)
    if (table_name !== 'workspace_deletions') await count(table_name, sql`workspace_id = ${ws.workspaceId}`);
  await count('workspaces', sql`id = ${ws.workspaceId}`);
  await count('job_result_pages', sql`job_id = any(${ids.jobs}::text[])`);
  await count('job_attempt_sources', sql`job_id = any(${ids.jobs}::text[])`);
  await count('delivery_sets', sql`schedule_id = any(${ids.schedules}::text[])`);
  await count('delivered_items', sql`set_id in (select id from delivery_sets where schedule_id = any(${ids.schedules}::text[]))`);
  await count('oauth_tokens', sql`key_id = any(${ids.keys}::text[])`);
  await count('stripe_events', sql`payment_id = ${ws.paymentId}`);
  await count('stripe_held_events', sql`payment_intent_id = ${`pi_export${ws.index}`}`);
  return out;
}

async function idsOf(ws: Seeded) {
  const db = stack.runtime.db;
  return {
    jobs: (await db.selectFrom('jobs').select('id').where('workspace_id', '=', ws.workspaceId).execute()).map((r) => r.id),
    schedules: (await db.selectFrom('schedules').select('id').where('workspace_id', '=', ws.workspaceId).execute()).map((r) => r.id),
    keys: (await db.selectFrom('api_keys').select('id').where('workspace_id', '=', ws.workspaceId).execute()).map((r) => r.id),
  };
}

/** Redis keys naming the workspace, and whether its queued job's and its webhook delivery's entries wait. */
async function redisOf(ws: Seeded) {
  const i = ws.index;
  const keys = await stack.runtime.redis.keys(`${stack.config.redisPrefix}:*${ws.workspaceId}*`);
  const entry = await stack.runtime.queues.jobs.getJob(`${ws.queuedJobId}-a1`);
  const deliveries = (await stack.runtime.queues.webhookDeliveries.getJobs(['waiting', 'delayed', 'prioritized'])).filter(
    (d) => d?.data.webhookId === `whk_export${i}`,
  );
  return { keys: keys.length, entry: Boolean(entry), deliveries: deliveries.length };
}

it('every table that holds a workspace row, or hangs off one, is one delete-workspace empties', async () => {
  const db = stack.runtime.db;
  const { rows: keyed } = await sql<{
    t: string;
  }>`select table_name as t from information_schema.columns where column_name = 'workspace_id' and table_schema = current_schema()`.execute(
    db,
  );
  const { rows: children } = await sql<{ t: string }>`
    select distinct c.conrelid::regclass::text as t from pg_constraint c
    where c.contype = 'f' and c.confrelid::regclass::text = any(${[...keyed.map((r) => r.t), 'workspaces', 'schedules', 'delivery_sets', 'api_keys', 'jobs', 'billing_payments']}::text[])
  `.execute(db);
  const covered = new Set<string>(WORKSPACE_TABLES);
  // users reference a workspace only as their default, which the deletion sets null: a user is not the workspace's.
  const missing = [...new Set([...keyed, ...children].map((r) => r.t))].filter(
    (t) => t !== 'workspaces' && t !== 'users' && t !== 'workspace_deletions' && !covered.has(t),
  );
  expect(missing).toEqual([]);
});

it('export-workspace writes its account, members, keys, jobs, ledger and audit as NDJSON, without secrets', async () => {
  const ws = await withPending(await populated());
  const file = path.join(dir, 'export.ndjson');
  expect(await admin('export-workspace', ws.workspaceId, '--out', file)).toBe('');
  const text = readFileSync(file, 'utf8');
  const records = text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
  const types = new Map<string, number>();
  for (const r of records) types.set(r.type, (types.get(r.type) ?? 0) + 1);
  expect(Object.fromEntries(types)).toMatchObject({
    workspace: 1,
    balance: 1,
    member: 1,
    invitation: 1,
    key: 1,
    job: 4,
    ledger: expect.any(Number),
    audit: expect.any(Number),
  });
  expect(records[0]).toMatchObject({ type: 'workspace', id: ws.workspaceId });
  expect(records.find((r) => r.type === 'member')).toMatchObject({
    user_id: ws.userId,
    email: expect.stringMatching(/^member\d+@example\.com$/),
    role: 'member',
  });
  expect(records.find((r) => r.type === 'key')).toMatchObject({ id: ws.keyId, prefix: ws.apiKey.slice(0, 12) });
  expect(types.get('ledger')).toBeGreaterThanOrEqual(5);
  // No secret, no hash of one.
  const hash = (await stack.runtime.db.selectFrom('api_keys').select('secret_hash').where('id', '=', ws.keyId).executeTakeFirstOrThrow())
    .secret_hash;
  expect(text).not.toContain(ws.apiKey);
  expect(text).not.toContain(hash);
  expect(text).not.toContain('invhash');
  expect(text).not.toContain('secret_hash');
  expect(text).not.toContain('lease_token');
  // Standard output without --out; an unknown workspace is a usage error.
  expect(await admin('export-workspace', ws.workspaceId)).toBe(text);
  await expect(admin('export-workspace', 'ws_missing')).rejects.toMatchObject({ code: 2 });
}, 120_000);

it('delete-workspace removes its data from Postgres and Redis, keeps other workspaces, and records the deletion', async () => {
  const [doomedOnly, keptOnly] = [await populated(), await populated()];
  const doomed = await withPending(doomedOnly);
  const kept = await withPending(keptOnly);
  const [doomedIds, keptIds] = [await idsOf(doomed), await idsOf(kept)];
  const before = await rowsOf(doomed, doomedIds);
  const keptBefore = await rowsOf(kept, keptIds);
  // Every table that holds the workspace's data has some of it, so the emptiness below means something.
  const empty = Object.entries(before)
    .filter(([, count]) => count === 0)
    .map(([t]) => t);
  expect(empty).toEqual([]);
  expect(await redisOf(doomed)).toEqual({ keys: 1, entry: true, deliveries: 1 });
  const keptRedis = await redisOf(kept);
  expect(keptRedis).toEqual({ keys: 1, entry: true, deliveries: 1 });

  // Without --yes: nothing deleted.
  await expect(admin('delete-workspace', doomed.workspaceId)).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--yes') });
  expect(await rowsOf(doomed, doomedIds)).toEqual(before);

  const out = JSON.parse((await admin('delete-workspace', doomed.workspaceId, '--yes', '--json')).trim());
  expect(out).toMatchObject({
    workspace_id: doomed.workspaceId,
    deletion_id: expect.stringMatching(/^aud_/),
    queue_entries: 2,
    redis_keys: 1,
  });

  const after = await rowsOf(doomed, doomedIds);
  const left = Object.entries(after).filter(([, count]) => count !== 0);
  expect(left).toEqual([]);
  expect(out.rows.jobs).toBe(before.jobs);
  expect(out.rows.audit_events).toBe(before.audit_events);
  expect(await redisOf(doomed)).toEqual({ keys: 0, entry: false, deliveries: 0 });
  // The member's user stays, without the default workspace.
  const user = await stack.runtime.db
    .selectFrom('users')
    .select(['id', 'default_workspace_id'])
    .where('id', '=', doomed.userId)
    .executeTakeFirstOrThrow();
  expect(user).toEqual({ id: doomed.userId, default_workspace_id: null });
  // The other workspace is untouched.
  expect(await rowsOf(kept, keptIds)).toEqual(keptBefore);
  expect(await redisOf(kept)).toEqual(keptRedis);
  // The record of the deletion survives it, and is append-only.
  const record = await stack.runtime.db
    .selectFrom('workspace_deletions')
    .selectAll()
    .where('workspace_id', '=', doomed.workspaceId)
    .executeTakeFirstOrThrow();
  expect(record).toMatchObject({
    id: out.deletion_id,
    action: 'workspace.deleted',
    actor_type: 'system',
    actor_id: 'admin-cli',
    data: { rows: out.rows, queue_entries: 2, redis_keys: 1 },
  });
  await expect(sql`delete from workspace_deletions where id = ${record.id}`.execute(stack.runtime.db)).rejects.toThrow(/append-only/);
  // The audit log still refuses deletes outside a workspace's deletion.
  await expect(sql`delete from audit_events where workspace_id = ${kept.workspaceId}`.execute(stack.runtime.db)).rejects.toThrow(
    /append-only/,
  );
  // Gone: a second run is a usage error; its key no longer authenticates.
  await expect(admin('delete-workspace', doomed.workspaceId, '--yes')).rejects.toMatchObject({ code: 2 });
  expect((await stack.api.get('/v1/account', { headers: doomed.auth })).status).toBe(401);
  expect((await stack.api.get('/v1/account', { headers: kept.auth })).status).toBe(200);
}, 180_000);
