import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@sdx/sdk';
import { type SeededWorkspace, type ServedStack, startServedStack } from '@sdx/testing';
import { clientFor, type Sent } from './support';

/** Iterators across pages (Link on jobs, batches, schedules; next_cursor on items), filters kept; ndjson exports. */

let served: ServedStack;
let dir: string;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-paging-'));
});
afterAll(async () => {
  await served.close();
  rmSync(dir, { recursive: true, force: true });
});

let ws: SeededWorkspace;
let sent: Sent[];
let sdx: Client;
beforeEach(async () => {
  ws = await served.stack.workspace({ credits: 100_000 });
  sent = [];
  sdx = clientFor(served.url, ws, { sent });
});

it('iterates a filtered job list across pages, the filter on every page', async () => {
  const made: string[] = [];
  for (let i = 0; i < 5; i++)
    made.push((await sdx.jobs.extract({ platform: 'instagram', operation: 'profile', target: `paging_${i}` })).id);
  await sdx.jobs.extract({ platform: 'tiktok', operation: 'profile', target: 'other' });
  const ids: string[] = [];
  for await (const job of sdx.jobs.list({ limit: 2, platform: 'instagram', include_result: false })) {
    expect(job.result).toBeNull();
    ids.push(job.id);
  }
  expect(ids).toEqual([...made].reverse());
  const pages = sent.filter((s) => s.method === 'GET' && s.path.startsWith('/v1/jobs?'));
  expect(pages.length).toBe(3);
  for (const page of pages) expect(new URL(page.path, 'http://x').searchParams.get('platform')).toBe('instagram');

  const first = await sdx.jobs.list({ limit: 2, platform: 'instagram' });
  expect(first.hasMore).toBe(true);
  expect((await first.next())!.data.map((j) => j.id)).toEqual([made[2], made[1]]);
});

it('iterates batches and schedules across pages', async () => {
  const batches: string[] = [];
  for (let i = 0; i < 3; i++)
    batches.push((await sdx.batches.create({ platform: 'instagram', operation: 'profile', targets: [`b${i}a`, `b${i}b`] })).id);
  expect((await sdx.batches.list({ limit: 2 }).toArray()).map((b) => b.id)).toEqual([...batches].reverse());

  const schedules: string[] = [];
  for (let i = 0; i < 3; i++) {
    schedules.push(
      (
        await sdx.schedules.create({
          name: `s${i}`,
          platform: 'instagram',
          operation: 'posts',
          targets: ['natgeo'],
          frequency: 'daily',
          timezone: 'UTC',
          starts_at: '2030-01-01T00:00:00Z',
        })
      ).id,
    );
  }
  const listed: string[] = [];
  for await (const schedule of sdx.schedules.list({ limit: 2 })) listed.push(schedule.id);
  expect(listed.sort()).toEqual([...schedules].sort());
});

it("reads a job's items page by page, as its export has them; exports ndjson", async () => {
  const job = await sdx.jobs.wait((await sdx.jobs.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 2500 })).id);
  const ids: string[] = [];
  for await (const item of sdx.jobs.items(job.id, { limit: 1000 })) ids.push((item as { id: string }).id);
  expect(ids).toHaveLength(2500);
  expect(ids).toEqual((job.result as Array<{ id: string }>).map((i) => i.id));
  expect(sent.filter((s) => s.path.startsWith(`/v1/jobs/${job.id}/items`))).toHaveLength(3);

  const file = path.join(dir, 'followers.ndjson');
  await sdx.exports.download(job.id, file, { format: 'ndjson' });
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  expect(lines).toHaveLength(2500);
  expect(JSON.parse(lines[0]).id).toBe(ids[0]);
});
