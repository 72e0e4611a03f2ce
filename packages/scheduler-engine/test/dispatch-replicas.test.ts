import { newId } from '@sdx/domain/testing';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { dispatchDue } from '@sdx/scheduler-engine';
import { type SeededWorkspace, startTestStack, untilRedisReady, type TestStack } from '@sdx/testing';

/**
 * Two scheduler engines (separate Services and connection pools) against one database dispatch
 * 1,000 due schedules: every occurrence exactly once, none missed, each with its own job.
 */
let stack: TestStack;
let second: Runtime;
beforeAll(async () => {
  stack = await startTestStack();
  second = createRuntime(stack.config, { name: 'scheduler-b' });
  await untilRedisReady(second);
});
afterAll(async () => {
  await second.close();
  await stack.close();
});

const SCHEDULES = 1000;
const WORKSPACES = 4;

it('dispatches 1,000 due schedules with no duplicate and no miss', async () => {
  const workspaces: SeededWorkspace[] = [];
  for (let i = 0; i < WORKSPACES; i++) {
    workspaces.push(await stack.workspace({ credits: 10_000, maxActiveJobs: 10_000, rateLimitPerMinute: 100_000 }));
  }
  const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
  const rows = Array.from({ length: SCHEDULES }, (_, i) => ({
    id: newId('sch'),
    workspace_id: workspaces[i % WORKSPACES].workspaceId,
    name: `s${i}`,
    platform: 'instagram',
    operation: 'profile',
    targets: JSON.stringify([`user${i}`]),
    requested_limit: 1,
    frequency: 'daily' as const,
    timezone: 'UTC',
    starts_at: due,
    starts_at_text: due.toISOString(),
    next_run_at: due,
    status: 'active' as const,
  }));
  for (let i = 0; i < rows.length; i += 250)
    await stack.runtime.db
      .insertInto('schedules')
      .values(rows.slice(i, i + 250))
      .execute();

  // Each engine claims 50 schedules per transaction and loops until nothing is due.
  const engine = async (services: Runtime['services']): Promise<number> => {
    let dispatched = 0;
    for (;;) {
      const round = await dispatchDue(services, { limit: 50, concurrency: 4 });
      dispatched += round.runs.length;
      if (round.claimed === 0) return dispatched;
    }
  };
  const counts = await Promise.all([engine(stack.runtime.services), engine(second.services)]);
  expect(counts[0] + counts[1]).toBe(SCHEDULES);
  expect(counts[0]).toBeGreaterThan(0);
  expect(counts[1]).toBeGreaterThan(0);

  const runs = await stack.runtime.db.selectFrom('schedule_runs').selectAll().execute();
  expect(runs).toHaveLength(SCHEDULES);
  expect(new Set(runs.map((r) => r.schedule_id)).size).toBe(SCHEDULES);
  expect(runs.every((r) => r.status === 'queued' && r.trigger === 'scheduled' && r.scheduled_for.getTime() === due.getTime())).toBe(true);
  expect(new Set(runs.map((r) => r.job_id)).size).toBe(SCHEDULES);

  const jobs = await stack.runtime.db.selectFrom('jobs').select(['id', 'schedule_id']).execute();
  expect(jobs).toHaveLength(SCHEDULES);
  expect(new Set(jobs.map((j) => j.schedule_id)).size).toBe(SCHEDULES);

  const next = await stack.runtime.db.selectFrom('schedules').select('next_run_at').execute();
  expect(next.every((s) => s.next_run_at!.getTime() === due.getTime() + 86_400_000)).toBe(true);
});
