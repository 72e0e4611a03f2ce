import { sql } from 'kysely';
import { startWorker } from '@sdx/app-worker';
import { type CounterReport, reconcileCounters } from '@sdx/domain/testing';
import {
  checkLedger,
  eventually,
  runAdmin,
  type SeededWorkspace,
  startTestStack,
  TEST_SECRETS_KEY,
  type TestStack,
  waitForJob,
} from '@sdx/testing';

/**
 * The money's stored counters (each workspace's month spend, reserved totals, lifetime spend and
 * purchased balance; each key's month spend) broken on purpose, as a release that did not keep
 * them leaves them after an upgrade's window, and mended from the reservations and the ledger:
 * by `reconcileCounters` (what `npm run admin -- reconcile-counters` runs as the upgrade's
 * contract step), by that command itself, and by the worker's reconciler. Admission reads the
 * mended month spend: a cap counts what was really spent.
 */

let stack: TestStack;
beforeAll(async () => {
  // The stack's worker runs jobs but no counter pass of its own: each case says who mends.
  stack = await startTestStack({ withWorker: true, env: { COUNTER_RECONCILE_INTERVAL_MS: '0' } });
});
afterAll(async () => {
  await stack.close();
});

interface Counters {
  month_spent: number;
  plan_reserved: number;
  lifetime_spent: number;
  purchased_balance: number;
}

async function countersOf(workspaceId: string): Promise<Counters> {
  const { rows } = await sql<Counters>`
    select month_spent::int, plan_reserved::int, lifetime_spent::int, purchased_balance::int
    from credit_balances where workspace_id = ${workspaceId}`.execute(stack.runtime.db);
  return rows[0];
}

const keySpend = async (keyId: string) =>
  Number(
    (await sql<{ spent: string }>`select spent::text from api_key_spend where key_id = ${keyId}`.execute(stack.runtime.db)).rows[0]
      ?.spent ?? -1,
  );

/** A workspace with purchased credits, a capped key, three completed jobs and one still held. */
async function spendingWorkspace(): Promise<{ ws: SeededWorkspace; key: { id: string; auth: Record<string, string> }; held: string }> {
  const ws = await stack.workspace({ credits: 2 });
  await ws.grant(100, 'purchased');
  const made = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'capped', role: 'member', monthly_credit_cap: 6 } });
  expect(made.status).toBe(201);
  const key = { id: made.body.id as string, auth: { 'X-API-Key': made.body.api_key as string } };
  for (let i = 0; i < 3; i += 1) {
    const job = await stack.api.post('/v1/jobs', {
      headers: { ...key.auth, 'Cache-Control': 'no-cache' },
      body: { operation: 'profile', target: `counters_${ws.workspaceId}_${i}` },
    });
    expect(job.status).toBe(202);
    await waitForJob(stack, key.auth, job.body.id, (j) => j.status === 'completed');
  }
  const held = await stack.api.post('/v1/jobs', {
    headers: { ...key.auth, 'Cache-Control': 'no-cache' },
    body: { operation: 'profile', target: `sandbox_slow_20000_counters_${ws.workspaceId}` },
  });
  expect(held.status).toBe(202);
  return { ws, key, held: held.body.id };
}

/** Breaks every counter of the workspace and its key as an older release's writes would (and worse). */
async function breakCounters(workspaceId: string, keyId: string): Promise<void> {
  await sql`
    update credit_balances
    set month_spent = 0, plan_reserved = plan_reserved + 7, lifetime_spent = lifetime_spent - 2, purchased_balance = purchased_balance + 5
    where workspace_id = ${workspaceId}`.execute(stack.runtime.db);
  await sql`update api_key_spend set spent = 0 where key_id = ${keyId}`.execute(stack.runtime.db);
}

const problemsOf = async (workspaceId: string, keyId: string) =>
  (await checkLedger(stack.runtime.db)).problems.filter((p) => p.includes(workspaceId) || p.includes(keyId));

it('reconcileCounters sets each broken counter back to what the reservations and the ledger say, and admission then counts it', async () => {
  const { ws, key } = await spendingWorkspace();
  const exact = await countersOf(ws.workspaceId);
  const exactKey = await keySpend(key.id);
  expect(exact.month_spent).toBe(4);
  expect(exactKey).toBe(4);
  expect(await problemsOf(ws.workspaceId, key.id)).toEqual([]);

  await breakCounters(ws.workspaceId, key.id);
  expect((await problemsOf(ws.workspaceId, key.id)).length).toBeGreaterThanOrEqual(5);
  // Broken, the caps undercount: the key would pass its cap of 6.
  expect((await stack.api.get('/v1/billing', { headers: ws.auth })).body.month_spent_credits).toBe(0);

  const report = await reconcileCounters(stack.runtime.db);
  const mine = report.fixes.filter((f) => f.workspace_id === ws.workspaceId);
  expect(mine.map((f) => [f.counter, f.was, f.now]).sort()).toEqual(
    [
      ['key_spend', 0, exactKey],
      ['lifetime_spent', exact.lifetime_spent - 2, exact.lifetime_spent],
      ['month_spent', 0, exact.month_spent],
      ['plan_reserved', exact.plan_reserved + 7, exact.plan_reserved],
      ['purchased_balance', exact.purchased_balance + 5, exact.purchased_balance],
    ].sort(),
  );
  expect(await countersOf(ws.workspaceId)).toEqual(exact);
  expect(await keySpend(key.id)).toBe(exactKey);
  expect(await problemsOf(ws.workspaceId, key.id)).toEqual([]);

  // Exact counters: a second pass mends nothing of this workspace.
  expect((await reconcileCounters(stack.runtime.db)).fixes.filter((f) => f.workspace_id === ws.workspaceId)).toEqual([]);
  // The cap counts the mended spend: 4 of 6 spent, so 2 more fit and the third is refused.
  for (let i = 0; i < 2; i += 1) {
    expect(
      (
        await stack.api.post('/v1/jobs', {
          headers: { ...key.auth, 'Cache-Control': 'no-cache' },
          body: { operation: 'profile', target: `counters_after_${i}` },
        })
      ).status,
    ).toBe(202);
  }
  const refused = await stack.api.post('/v1/jobs', {
    headers: { ...key.auth, 'Cache-Control': 'no-cache' },
    body: { operation: 'profile', target: 'counters_past_cap' },
  });
  expect(refused.status).toBe(402);
  expect(refused.body.detail).toMatchObject({ error: 'spend_cap_reached', scope: 'key', cap: 6, spent: 6 });
}, 90_000);

it('npm run admin -- reconcile-counters mends them and prints each', async () => {
  const { ws, key } = await spendingWorkspace();
  const exact = await countersOf(ws.workspaceId);
  await breakCounters(ws.workspaceId, key.id);
  const { stdout } = await runAdmin(['reconcile-counters', '--json'], {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATABASE_URL: stack.databaseUrl,
    REDIS_URL: stack.config.redisUrl,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: 'silent',
  });
  const printed = JSON.parse(stdout.trim().split('\n').pop()!) as CounterReport;
  expect(
    printed.fixes
      .filter((f) => f.workspace_id === ws.workspaceId)
      .map((f) => f.counter)
      .sort(),
  ).toEqual(['key_spend', 'lifetime_spent', 'month_spent', 'plan_reserved', 'purchased_balance']);
  expect(await countersOf(ws.workspaceId)).toEqual(exact);
  expect(await problemsOf(ws.workspaceId, key.id)).toEqual([]);
}, 90_000);

it("the worker's reconciler mends them on its own, at start and then every COUNTER_RECONCILE_INTERVAL_MS", async () => {
  const { ws, key } = await spendingWorkspace();
  const exact = await countersOf(ws.workspaceId);
  await breakCounters(ws.workspaceId, key.id);
  const passes: CounterReport[] = [];
  const worker = startWorker({
    services: { ...stack.runtime.services, config: { ...stack.config, counterReconcileIntervalMs: 300 } },
    providers: stack.runtime.registry,
    redisUrl: stack.config.redisUrl,
    concurrency: 1,
    webhookConcurrency: 0,
    destinations: false,
    mail: false,
    billing: false,
    onCountersReconciled: (report) => passes.push(report),
  });
  try {
    await eventually(() => passes.some((p) => p.fixes.some((f) => f.workspace_id === ws.workspaceId)) || undefined, 30_000, 50);
    expect(await countersOf(ws.workspaceId)).toEqual(exact);
    expect(await problemsOf(ws.workspaceId, key.id)).toEqual([]);
    // Broken again while it runs: the next pass mends it too.
    await breakCounters(ws.workspaceId, key.id);
    const before = passes.length;
    await eventually(
      () => passes.slice(before).some((p) => p.fixes.some((f) => f.workspace_id === ws.workspaceId)) || undefined,
      30_000,
      50,
    );
    expect(await countersOf(ws.workspaceId)).toEqual(exact);
    expect(await keySpend(key.id)).toBe(4);
  } finally {
    await worker.close({ graceMs: 100 });
  }
}, 90_000);
