import { sql } from 'kysely';
import { claimJobs, completeJobs, deleteWorkspace, systemActor } from '@sdx/domain/testing';
import { eventually, type LoopbackS3, type SeededWorkspace, startLoopbackS3, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Results of different workspaces never share an object (extensions-3.md 1): with
 * RESULT_STORE=s3 the last pages of jobs completing together are written one object per
 * workspace, so deleting a workspace (admin delete-workspace) deletes every object of its
 * results and leaves the other workspace's intact. The completions are made one group, as the
 * worker's group commit makes them when they arrive together, against a loopback S3.
 */

const BUCKET = 'sdx-results';
let s3: LoopbackS3;
let stack: TestStack;

beforeAll(async () => {
  s3 = await startLoopbackS3([BUCKET]);
  stack = await startTestStack({
    env: {
      RESULT_STORE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: BUCKET,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: '1',
    },
  });
  // The pool's first connections (no worker warmed it): on a loaded machine one can pass the 5 s connect timeout.
  await eventually(async () => (await sql`select 1 as one`.execute(stack.runtime.db)).rows.length === 1, 30_000);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await s3?.stop();
});

async function objectKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of stack.runtime.services.resultObjects!.list()) keys.push(...page.map((o) => o.key));
  return keys;
}

async function submit(ws: SeededWorkspace, target: string): Promise<string> {
  const res = await stack.api.post('/v1/jobs', {
    headers: { ...ws.auth, 'Cache-Control': 'no-cache' },
    body: { platform: 'tiktok', operation: 'profile', target },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

/** A profile as the sandbox makes them, its bio naming the workspace whose result it is. */
function profile(owner: string, i: number) {
  return {
    kind: 'profile' as const,
    platform: 'tiktok' as const,
    id: `${owner}-${i}`,
    username: `user_${i}`,
    display_name: `User ${i}`,
    bio: owner,
    avatar_url: null,
    url: `https://www.tiktok.com/@user_${i}`,
    verified: false,
    private: false,
    followers_count: 1,
    following_count: 1,
    posts_count: 1,
    caption: null,
    published_at: null,
  };
}

it('two workspaces completing in one group get objects of their own; deleting one leaves none of its bytes and the other intact', async () => {
  const doomed = await stack.workspace({ credits: 1000 });
  const kept = await stack.workspace({ credits: 1000 });
  // Two jobs of each workspace, interleaved, completed together.
  const ids = [
    await submit(doomed, 'ws_split_a1'),
    await submit(kept, 'ws_split_b1'),
    await submit(doomed, 'ws_split_a2'),
    await submit(kept, 'ws_split_b2'),
  ];
  const owner = (i: number) => (i % 2 === 0 ? doomed.workspaceId : kept.workspaceId);
  const claimed = await claimJobs(stack.runtime.services, ids);
  const completions = claimed.map((row, i) => {
    if (!row || row instanceof Error) throw new Error(`job ${ids[i]} not claimed`);
    return {
      job: row,
      lease: row.lease_token!,
      delivered: { total: 1, primary: 1, bundled: 0, finalPage: { pageNo: 1, items: [profile(owner(i), i)] } },
    };
  });
  expect(await completeJobs(stack.runtime.services, completions)).toEqual([true, true, true, true]);

  const { rows } = await sql<{
    job_id: string;
    workspace_id: string;
    object_key: string;
    object_offset: number | null;
    stored_bytes: number;
  }>`
    select p.job_id, j.workspace_id, p.object_key, p.object_offset, p.stored_bytes
    from job_result_pages p join jobs j on j.id = p.job_id where p.job_id = any(${ids}::text[])`.execute(stack.runtime.db);
  expect(rows).toHaveLength(4);
  const keysOf = (workspaceId: string) => new Set(rows.filter((r) => r.workspace_id === workspaceId).map((r) => r.object_key));
  const doomedKeys = keysOf(doomed.workspaceId);
  const keptKeys = keysOf(kept.workspaceId);
  // One write per workspace (its two pages share it), and no key names both workspaces' pages.
  expect(doomedKeys.size).toBe(1);
  expect(keptKeys.size).toBe(1);
  expect([...doomedKeys].filter((k) => keptKeys.has(k))).toEqual([]);
  // Each object holds its own workspace's items only.
  const bucket = stack.runtime.services.resultObjects!;
  for (const row of rows) {
    const lines = await bucket.lines(
      row.object_key,
      row.object_offset === null ? null : { offset: row.object_offset, bytes: row.stored_bytes },
    );
    expect(lines.map((l) => JSON.parse(l).bio)).toEqual([row.workspace_id]);
  }
  const whole = async (key: string) => (await bucket.lines(key)).map((l) => JSON.parse(l).bio);
  expect(await whole([...doomedKeys][0])).toEqual([doomed.workspaceId, doomed.workspaceId]);
  expect(await whole([...keptKeys][0])).toEqual([kept.workspaceId, kept.workspaceId]);

  await deleteWorkspace(stack.runtime.services, stack.runtime.redis, doomed.workspaceId, systemActor('test'));
  const left = await objectKeys();
  expect(left.filter((k) => doomedKeys.has(k))).toEqual([]);
  for (const key of keptKeys) expect(left).toContain(key);
  // No object left in the bucket holds a byte of the deleted workspace's results.
  for (const key of left) expect((await whole(key)).filter((o) => o === doomed.workspaceId)).toEqual([]);
  // The other workspace's pages read as before, each its own part of its object.
  for (const row of rows.filter((r) => r.workspace_id === kept.workspaceId)) {
    const lines = await bucket.lines(
      row.object_key,
      row.object_offset === null ? null : { offset: row.object_offset, bytes: row.stored_bytes },
    );
    expect(lines.map((l) => JSON.parse(l).bio)).toEqual([kept.workspaceId]);
  }
  const { rows: doomedRows } = await sql`select 1 from job_result_pages where job_id = any(${[ids[0], ids[2]]}::text[])`.execute(
    stack.runtime.db,
  );
  expect(doomedRows).toEqual([]);
});
