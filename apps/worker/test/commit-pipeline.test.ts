import pg from 'pg';
import { eventually, startTestStack, type TestStack, usageChecked } from '@sdx/testing';

/**
 * A worker slot takes its next queue entry once its attempt has delivered and handed the
 * completion to the completion group, without waiting for that group's commit. Through real
 * Postgres, Redis and a worker of one slot, with the commit held back by a lock on the
 * workspace's balance row: the next job is claimed meanwhile, nothing completes or bills before
 * the commit, everything does once after it, and close() waits for it.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function statusOf(jobId: string): Promise<string> {
  const row = await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
  return row.status;
}

/** Holds the workspace's balance row locked from another connection until release(). */
async function holdBalance(workspaceId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('select 1 from credit_balances where workspace_id = $1 for update', [workspaceId]);
  return {
    async release() {
      await client.query('commit');
      await client.end();
    },
  };
}

it('frees the slot before the commit, completes and bills each job once after it, and close() waits for it', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const submit = async (target: string) => {
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target } });
    expect(res.status).toBe(202);
    return res.body.id as string;
  };
  // Both admitted first (admission needs the balance row too); the first extracts for 700 ms.
  const first = await submit('pipeline_first_sandbox_slow_700');
  const second = await submit('pipeline_second');
  const lock = await holdBalance(ws.workspaceId);
  const worker = stack.startWorker(1);
  let released = false;
  try {
    // The only slot delivers the first job, then takes the second while the first's commit
    // waits on the lock.
    await eventually(async () => (await statusOf(second)) === 'running', 10_000);
    expect(await statusOf(first)).toBe('running');
    const usage = await usageChecked(stack, ws);
    expect(usage).toMatchObject({ credits_used: 0, credits_reserved: 2 });

    let closed = false;
    const closing = worker.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closed).toBe(false);
    released = true;
    await lock.release();
    await closing;
  } finally {
    if (!released) await lock.release();
  }
  expect(await statusOf(first)).toBe('completed');
  expect(await statusOf(second)).toBe('completed');
  const ledger = await stack.runtime.db
    .selectFrom('credit_ledger')
    .select(['job_id', 'entry_type'])
    .where('job_id', 'in', [first, second])
    .orderBy('id')
    .execute();
  expect(
    ledger
      .filter((e) => e.entry_type === 'settle')
      .map((e) => e.job_id)
      .sort(),
  ).toEqual([first, second].sort());
  expect(await usageChecked(stack, ws)).toMatchObject({ credits_used: 2, credits_reserved: 0, credits_remaining: 98 });
});
