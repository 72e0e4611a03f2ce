import http from 'node:http';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import request from 'supertest';
import { eventually, heldSandbox, listen, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Job and batch downloads through HTTP, read back with papaparse and exceljs. The writers'
 * own rules (quoting, formula neutralisation, column flattening) are tested in
 * packages/exports; here: readiness, tenancy, headers, rows, order and streaming.
 */
// Slow pages wait while a test holds them: what it asserts before completion happens before it.
const sandbox = heldSandbox();
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, providers: [sandbox.provider] });
});
afterAll(async () => {
  await stack.close();
});

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const LEADING_ITEM_COLUMNS = ['kind', 'platform', 'id', 'username', 'caption', 'url', 'published_at'];

type Item = Record<string, unknown> & { id: string; kind: string };

async function workspace(options: Parameters<TestStack['workspace']>[0] = {}): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000, ...options });
}

async function createJob(ws: SeededWorkspace, body: Record<string, unknown>): Promise<string> {
  const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

async function completedJob(
  ws: SeededWorkspace,
  id: string,
  timeoutMs = 20_000,
): Promise<{ id: string; result: unknown; result_count: number }> {
  return eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
    return res.body.status === 'completed' ? res.body : undefined;
  }, timeoutMs);
}

function download(ws: SeededWorkspace, path: string, format: string) {
  return stack.api.get(path, { headers: ws.auth, query: { format } });
}

/** A binary download (supertest does not buffer xlsx bodies by itself). */
async function downloadBinary(ws: SeededWorkspace, path: string): Promise<request.Response> {
  return request(stack.app)
    .get(path)
    .set(ws.auth)
    .query({ format: 'xlsx' })
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

function parseCsv(text: string): string[][] {
  const parsed = Papa.parse<string[]>(text, { skipEmptyLines: true });
  expect(parsed.errors).toEqual([]);
  return parsed.data;
}

async function readXlsx(body: Buffer): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(body as unknown as ArrayBuffer);
  expect(workbook.worksheets).toHaveLength(1);
  const rows: unknown[][] = [];
  workbook.worksheets[0].eachRow({ includeEmpty: true }, (row) => {
    rows.push((row.values as unknown[]).slice(1));
  });
  return rows;
}

describe('GET /v1/jobs/{job_id}/export', () => {
  it('answers 404 for unknown and foreign jobs, 422 for an unknown format, 409 before completion, then 200', async () => {
    const ws = await workspace();
    const stranger = await workspace();
    const letGo = sandbox.hold();
    const id = await createJob(ws, { operation: 'posts', target: 'slowposter_sandbox_slow_200', limit: 3 });

    const early = await download(ws, `/v1/jobs/${id}/export`, 'csv');
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatchObject({ error: 'results_not_ready', job_id: id });

    const pdf = await download(ws, `/v1/jobs/${id}/export`, 'pdf');
    expect(pdf.status).toBe(422);
    expect(pdf.body.detail[0]).toMatchObject({ loc: ['query', 'format'], type: 'enum' });

    for (const res of [await download(stranger, `/v1/jobs/${id}/export`, 'json'), await download(ws, '/v1/jobs/job_nope/export', 'json')]) {
      expect(res.status).toBe(404);
      expect(res.body.detail.error).toBe('job_not_found');
    }

    letGo();
    await completedJob(ws, id);
    const ready = await download(ws, `/v1/jobs/${id}/export`, 'csv');
    expect(ready.status).toBe(200);
    expect(parseCsv(ready.text)).toHaveLength(4);
  });

  it('downloads json, csv and xlsx with one row per item, without charging', async () => {
    const ws = await workspace({ credits: 100 });
    const id = await createJob(ws, { operation: 'posts', target: 'exporter', limit: 7 });
    const job = await completedJob(ws, id);
    const items = job.result as Item[];
    expect(items).toHaveLength(7);
    const usageBefore = (await stack.api.get('/v1/usage/current', { headers: ws.auth })).body;

    const json = await stack.api.get(`/v1/jobs/${id}/export`, { headers: ws.auth });
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.headers['content-disposition']).toBe(`attachment; filename="${id}.json"`);
    expect(json.body).toEqual(items);

    const csv = await download(ws, `/v1/jobs/${id}/export`, 'csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="${id}.csv"`);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header.slice(0, LEADING_ITEM_COLUMNS.length)).toEqual(LEADING_ITEM_COLUMNS);
    expect(header).toEqual(expect.arrayContaining(['media_type', 'hashtags', 'metrics.likes', 'metrics.views']));
    expect(rows).toHaveLength(7);
    const col = (name: string) => header.indexOf(name);
    rows.forEach((row, i) => {
      expect(row).toHaveLength(header.length);
      expect(row[col('id')]).toBe(items[i].id);
      expect(row[col('kind')]).toBe('post');
      expect(row[col('hashtags')]).toBe(JSON.stringify(items[i].hashtags));
      expect(row[col('metrics.likes')]).toBe(String((items[i].metrics as { likes: number | null }).likes ?? ''));
    });

    const xlsx = await downloadBinary(ws, `/v1/jobs/${id}/export`);
    expect(xlsx.status).toBe(200);
    expect(xlsx.headers['content-type']).toBe(XLSX_TYPE);
    expect(xlsx.headers['content-disposition']).toBe(`attachment; filename="${id}.xlsx"`);
    const sheet = await readXlsx(xlsx.body as Buffer);
    expect(sheet).toHaveLength(8);
    expect(sheet[0]).toEqual(header);
    sheet.slice(1).forEach((row, i) => {
      expect(row[col('id')]).toBe(items[i].id);
      expect(row[col('username')]).toBe(items[i].username);
    });

    expect((await stack.api.get('/v1/usage/current', { headers: ws.auth })).body).toEqual(usageBefore);
  });

  it('exports a profile bundle as the profile row then the post rows, and as {profile, posts} in json', async () => {
    const ws = await workspace();
    const id = await createJob(ws, { operation: 'profile', target: 'bundled', include_posts: 3 });
    const job = await completedJob(ws, id);
    const json = await stack.api.get(`/v1/jobs/${id}/export`, { headers: ws.auth });
    expect(json.body).toEqual(job.result);
    expect(Object.keys(json.body)).toEqual(['profile', 'posts']);

    const [header, ...rows] = parseCsv((await download(ws, `/v1/jobs/${id}/export`, 'csv')).text);
    expect(rows.map((r) => r[header.indexOf('kind')])).toEqual(['profile', 'post', 'post', 'post']);
    expect(header).toEqual(expect.arrayContaining(['followers_count', 'metrics.likes']));

    const single = await createJob(ws, { operation: 'profile', target: 'lonely' });
    await completedJob(ws, single);
    expect(parseCsv((await download(ws, `/v1/jobs/${single}/export`, 'csv')).text)).toHaveLength(2);
  });
});

describe('GET /v1/batches/{batch_id}/export', () => {
  it('is 409 until a child completes, then exports every completed child in target order', async () => {
    const ws = await workspace({ credits: 1000 });
    const targets = ['first_sandbox_slow_800', 'second_sandbox_slow_2500', 'third_sandbox_not_found', 'fourth_sandbox_slow_800'];
    const created = await stack.api.post('/v1/batches', { headers: ws.auth, body: { operation: 'posts', targets, limit: 4 } });
    expect(created.status).toBe(202);
    const batchId = created.body.id as string;
    const jobIds = (created.body.jobs as Array<{ id: string }>).map((j) => j.id);

    const early = await download(ws, `/v1/batches/${batchId}/export`, 'json');
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatchObject({ error: 'results_not_ready', batch_id: batchId });
    expect((await download(ws, `/v1/batches/${batchId}/export`, 'pdf')).status).toBe(422);

    // Ready with the first completed child, while another is still running.
    const partial = await eventually(async () => {
      const b = (await stack.api.get(`/v1/batches/${batchId}`, { headers: ws.auth })).body;
      return b.completed_count >= 1 && b.jobs[1].status !== 'completed' ? b : undefined;
    });
    const firstExport = await download(ws, `/v1/batches/${batchId}/export`, 'json');
    expect(firstExport.status).toBe(200);
    const completedNow = (partial.jobs as Array<{ id: string; status: string }>).filter((j) => j.status === 'completed').map((j) => j.id);
    expect(firstExport.body.map((e: { job_id: string }) => e.job_id)).toEqual(expect.arrayContaining(completedNow));
    expect(firstExport.body.map((e: { job_id: string }) => e.job_id)).not.toContain(jobIds[1]);

    await eventually(async () => {
      const b = (await stack.api.get(`/v1/batches/${batchId}`, { headers: ws.auth })).body;
      return b.status === 'completed' ? b : undefined;
    });
    const results = await Promise.all(jobIds.map(async (id) => (await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth })).body));

    const json = await download(ws, `/v1/batches/${batchId}/export`, 'json');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.headers['content-disposition']).toBe(`attachment; filename="${batchId}.json"`);
    expect(json.body).toEqual(
      [0, 1, 3].map((i) => ({ job_id: jobIds[i], target: targets[i], status: 'completed', result_count: 4, result: results[i].result })),
    );

    const csv = await download(ws, `/v1/batches/${batchId}/export`, 'csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="${batchId}.csv"`);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header.slice(0, 3 + LEADING_ITEM_COLUMNS.length)).toEqual(['batch_id', 'job_id', 'target', ...LEADING_ITEM_COLUMNS]);
    expect(rows).toHaveLength(12);
    const expected = [0, 1, 3].flatMap((i) => (results[i].result as Item[]).map((item) => [batchId, jobIds[i], targets[i], item.id]));
    expect(rows.map((r) => [r[0], r[1], r[2], r[header.indexOf('id')]])).toEqual(expected);

    const xlsx = await downloadBinary(ws, `/v1/batches/${batchId}/export`);
    expect(xlsx.status).toBe(200);
    expect(xlsx.headers['content-type']).toBe(XLSX_TYPE);
    expect(xlsx.headers['content-disposition']).toBe(`attachment; filename="${batchId}.xlsx"`);
    const sheet = await readXlsx(xlsx.body as Buffer);
    expect(sheet[0]).toEqual(header);
    expect(sheet.slice(1).map((r) => [r[0], r[1], r[2], r[header.indexOf('id')]])).toEqual(expected);
  });
});

describe('large exports', () => {
  it('exports a completed 100-target profile batch as a workbook of 100 rows plus a header', async () => {
    const ws = await workspace({ credits: 1000 });
    const targets = Array.from({ length: 100 }, (_, i) => `member_${i}`);
    const created = await stack.api.post('/v1/batches', { headers: ws.auth, body: { operation: 'profile', targets } });
    expect(created.status).toBe(202);
    const batchId = created.body.id as string;
    const done = await eventually(async () => {
      const b = (await stack.api.get(`/v1/batches/${batchId}`, { headers: ws.auth })).body;
      return b.status === 'completed' ? b : undefined;
    }, 30_000);
    expect(done).toMatchObject({ completed_count: 100, result_count: 100, billed_credits: 100, reserved_credits: 0 });
    const sheet = await readXlsx((await downloadBinary(ws, `/v1/batches/${batchId}/export`)).body as Buffer);
    expect(sheet).toHaveLength(101);
    expect(sheet[0].slice(0, 3)).toEqual(['batch_id', 'job_id', 'target']);
    expect(sheet.slice(1).map((r) => r[2])).toEqual(targets);
    expect(sheet.slice(1).every((r) => r[0] === batchId && r[3] === 'profile')).toBe(true);
  }, 40_000);

  it('streams a 25,000-item followers job as csv and xlsx', async () => {
    const ws = await workspace({ credits: 60_000 });
    const id = await createJob(ws, { platform: 'twitter', operation: 'followers', target: 'bigaccount', limit: 25_000 });
    await eventually(async () => {
      const res = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
      return res.body.status === 'completed' ? res.body : undefined;
    }, 25_000);

    // Over a real socket: the body arrives in many chunks, with no Content-Length (not buffered whole).
    const { url, server } = await listen(stack.app);
    try {
      const { headers, chunks, text } = await new Promise<{ headers: http.IncomingHttpHeaders; chunks: number; text: string }>(
        (resolve, reject) => {
          http
            .get(`${url}/v1/jobs/${id}/export?format=csv`, { headers: ws.auth }, (res) => {
              const parts: Buffer[] = [];
              res.on('data', (c: Buffer) => parts.push(c));
              res.on('end', () => resolve({ headers: res.headers, chunks: parts.length, text: Buffer.concat(parts).toString('utf8') }));
              res.on('error', reject);
            })
            .on('error', reject);
        },
      );
      expect(headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(headers['content-length']).toBeUndefined();
      expect(headers['transfer-encoding']).toBe('chunked');
      expect(chunks).toBeGreaterThan(5);
      const [header, ...rows] = parseCsv(text);
      expect(header.slice(0, LEADING_ITEM_COLUMNS.length)).toEqual(LEADING_ITEM_COLUMNS);
      expect(rows).toHaveLength(25_000);
      expect(new Set(rows.map((r) => r[header.indexOf('id')])).size).toBe(25_000);
      expect(rows.every((r) => r[0] === 'profile')).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }

    const xlsx = await downloadBinary(ws, `/v1/jobs/${id}/export`);
    expect(xlsx.status).toBe(200);
    const sheet = await readXlsx(xlsx.body as Buffer);
    expect(sheet).toHaveLength(25_001);
  }, 40_000);
});
