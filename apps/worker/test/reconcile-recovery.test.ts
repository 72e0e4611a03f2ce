import { sql } from 'kysely';
import { loadConfig } from '@sdx/config';
import { createJob, reconcileJobs, type Tenant } from '@sdx/domain/testing';
import { dataEpochKey, jobIdsOf } from '@sdx/queue';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { startTestStack, testRedisUrl, untilRedisReady, type SeededWorkspace, type TestStack } from '@sdx/testing';

/**
 * Recovery at full speed, for the right deployment: after Redis loses its data, reconcilers
 * running at once split the backlog between them (each job taken by exactly one), restore every
 * entry at its priority, and touch only the jobs their own deployment admitted.
 */

let stack: TestStack;
let other: Runtime | null = null;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  if (other) {
    await other.queues.jobs.obliterate({ force: true }).catch(() => undefined);
    await other.close();
  }
  await stack.close();
});

async function tenantOf(ws: SeededWorkspace): Promise<Tenant> {
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  return { workspace, keyId: null, role: null };
}

async function admitMany(ws: SeededWorkspace, count: number, prefix: string): Promise<string[]> {
  const tenant = await tenantOf(ws);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 200) {
    const created = await Promise.all(
      Array.from({ length: Math.min(200, count - i) }, (_, k) =>
        createJob(
          stack.runtime.services,
          tenant,
          { platform: 'instagram', operation: 'profile', target: `${prefix}${i + k}` },
          { endpoint: 'POST /v1/jobs' },
        ),
      ),
    );
    ids.push(...created.map((c) => c.job.id));
  }
  await stack.runtime.queues.idle();
  return ids;
}

/** Every job an entry waiting in the queue carries, with the entry's priority. */
async function queuedEntries(): Promise<Map<string, number>> {
  const entries = await stack.runtime.queues.jobs.getJobs(['waiting', 'prioritized']);
  const carried = new Map<string, number>();
  for (const entry of entries) for (const id of jobIdsOf(entry.data)) carried.set(id, entry.opts.priority ?? 0);
  return carried;
}

/** Redis loses its data: the entries and the data epoch with them. */
async function loseRedisData(): Promise<void> {
  await stack.runtime.queues.jobs.obliterate({ force: true });
  await stack.runtime.redis.del(dataEpochKey(stack.config.redisPrefix, stack.config.deploymentId));
}

it('splits a lost backlog between reconcilers running at once: every job re-queued once, at its priority', async () => {
  const big = await stack.workspace({ credits: 100_000, maxActiveJobs: 5_000 });
  const small = await stack.workspace({ credits: 100 });
  const ids = await admitMany(big, 1_500, 'backlog');
  const [lone] = await admitMany(small, 1, 'lone');
  const before = await queuedEntries();
  expect(before.size).toBe(1_501);
  // Round robin across workspaces: the other workspace's only job goes with the first of the big one.
  expect(before.get(lone)).toBe(1);
  expect(Math.max(...ids.map((id) => before.get(id)!))).toBeGreaterThan(1_000);

  await loseRedisData();
  expect((await queuedEntries()).size).toBe(0);

  const started = Date.now();
  const reports = await Promise.all([1, 2, 3].map(() => reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0, batchSize: 100 })));
  const elapsed = Date.now() - started;
  const taken = reports.flatMap((r) => r.enqueuedIds);
  expect(taken).toHaveLength(1_501);
  expect(new Set(taken).size).toBe(1_501);
  // Each reconciler did a share of the work.
  for (const report of reports) expect(report.enqueued).toBeGreaterThan(0);
  expect(elapsed).toBeLessThan(10_000);

  const after = await queuedEntries();
  expect(after.size).toBe(1_501);
  // Each in its own entry now, at the priority recorded on it at admission.
  const recorded = await stack.runtime.db
    .selectFrom('jobs')
    .select(['id', 'queue_priority'])
    .where('id', 'in', [...ids, lone])
    .execute();
  for (const { id, queue_priority } of recorded) expect(after.get(id)).toBe(queue_priority);
  expect(after.get(lone)).toBe(1);

  // Once re-queued, a job is not taken again until the data is lost again (or its recheck is due).
  const again = await reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0 });
  expect(again.enqueued).toBe(0);
}, 60_000);

it("touches only its own deployment's jobs, and adopts jobs admitted before deployments were recorded", async () => {
  const scoped = await startTestStack();
  try {
    const ws = await scoped.workspace({ credits: 100 });
    const tenant: Tenant = {
      workspace: await scoped.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
      keyId: null,
      role: null,
    };
    const created = [];
    for (const target of ['dep_a', 'dep_b', 'dep_c', 'dep_legacy']) {
      created.push(
        (
          await createJob(
            scoped.runtime.services,
            tenant,
            { platform: 'instagram', operation: 'profile', target },
            { endpoint: 'POST /v1/jobs' },
          )
        ).job,
      );
    }
    await scoped.runtime.queues.idle();
    const mine = scoped.config.deploymentId;
    expect(created.map((j) => j.deployment)).toEqual([mine, mine, mine, mine]);
    const [a, b, c, legacy] = created.map((j) => j.id) as [string, string, string, string];

    // c's worker died mid-attempt; legacy was admitted before deployments were recorded.
    const claimed = await scoped.runtime.services.claims.submit(c);
    expect(claimed?.status).toBe('running');
    await sql`update jobs set heartbeat_at = now() - interval '1 hour' where id = ${c}`.execute(scoped.runtime.db);
    await sql`update jobs set deployment = null where id = ${legacy}`.execute(scoped.runtime.db);
    // Redis loses this deployment's entries.
    await scoped.runtime.queues.jobs.obliterate({ force: true });
    await scoped.runtime.redis.del(dataEpochKey(scoped.config.redisPrefix, mine));

    // A second deployment on the same database, under its own Redis prefix.
    other = createRuntime(
      loadConfig({
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        DATABASE_URL: scoped.databaseUrl,
        REDIS_URL: testRedisUrl(),
        REDIS_PREFIX: `${scoped.config.redisPrefix}x`,
      }),
      {
        name: 'other',
        dbPoolSize: 2,
      },
    );
    expect(other.config.deploymentId).not.toBe(mine);
    await untilRedisReady(other);
    const theirs = await reconcileJobs(other.services, { enqueueGraceMs: 0 });
    // Only the job of no deployment, which it adopts.
    expect(theirs).toMatchObject({ requeued: 0, failed: 0, enqueued: 1, enqueuedIds: [legacy] });
    const rows = new Map(
      (await scoped.runtime.db.selectFrom('jobs').selectAll().where('id', 'in', [a, b, c, legacy]).execute()).map((r) => [r.id, r]),
    );
    expect(rows.get(c)).toMatchObject({ status: 'running', deployment: mine });
    expect(rows.get(legacy)).toMatchObject({ status: 'queued', deployment: other.config.deploymentId });
    expect((await other.queues.jobs.getJobs(['waiting', 'prioritized'])).map((e) => e.data.jobId)).toEqual([legacy]);

    const ours = await reconcileJobs(scoped.runtime.services, { enqueueGraceMs: 0 });
    expect(ours).toMatchObject({ requeued: 1, failed: 0, enqueued: 2 });
    expect(new Set(ours.enqueuedIds)).toEqual(new Set([a, b]));
    const entries = (await scoped.runtime.queues.jobs.getJobs(['waiting', 'prioritized'])).flatMap((e) => jobIdsOf(e.data));
    expect(new Set(entries)).toEqual(new Set([a, b, c]));
  } finally {
    await scoped.close();
  }
}, 60_000);

it('takes first, at its next pass, a job whose queue add failed', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const [id] = await admitMany(ws, 1, 'failed_add');
  // The add failed (Redis refused): the job carries the failed mark, older than any cutoff.
  await stack.runtime.queues.jobs.remove(`${id}-a1`);
  await sql`update jobs set enqueued_at = to_timestamp(0) where id = ${id}`.execute(stack.runtime.db);
  const report = await reconcileJobs(stack.runtime.services, { enqueueGraceMs: 0 });
  expect(report.enqueuedIds).toEqual([id]);
  expect((await queuedEntries()).has(id)).toBe(true);
}, 30_000);

it("starts a new deployment's data epoch at its first add, so the first reconciler pass leaves the jobs already queued alone", async () => {
  const fresh = await startTestStack();
  try {
    const key = dataEpochKey(fresh.config.redisPrefix, fresh.config.deploymentId);
    expect(await fresh.runtime.redis.exists(key)).toBe(0);
    const ws = await fresh.workspace({ credits: 100 });
    const tenant: Tenant = {
      workspace: await fresh.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
      keyId: null,
      role: null,
    };
    const admit = async (target: string) =>
      (
        await createJob(
          fresh.runtime.services,
          tenant,
          { platform: 'instagram', operation: 'profile', target },
          { endpoint: 'POST /v1/jobs' },
        )
      ).job.id;
    const first = await admit('epoch_first');
    await fresh.runtime.queues.idle();
    // The first add started the epoch, before any reconciler ran.
    expect(Number(await fresh.runtime.redis.get(key))).toBeGreaterThan(0);
    const later: string[] = [];
    for (let i = 0; i < 20; i += 1) later.push(await admit(`epoch_later_${i}`));
    await fresh.runtime.queues.idle();

    // The first pass may add the first job again (its mark precedes the epoch its add started);
    // none admitted after that add.
    const report = await reconcileJobs(fresh.runtime.services, { enqueueGraceMs: 0 });
    expect(report.enqueued).toBeLessThanOrEqual(1);
    for (const id of report.enqueuedIds) expect(id).toBe(first);
    const entries = (await fresh.runtime.queues.jobs.getJobs(['waiting', 'prioritized'])).flatMap((e) => jobIdsOf(e.data));
    expect(new Set(entries)).toEqual(new Set([first, ...later]));
  } finally {
    await fresh.close();
  }
}, 60_000);
