import express from 'express';
import http from 'node:http';
import pino from 'pino';
import request from 'supertest';
import { type ExportRow, writeCsv, writeJson, writeXlsx } from '@sdx/exports';
import { renderErrors } from '../src/middleware/errors';
import { sendDownload } from '../src/routes/export-response';

/**
 * sendDownload over HTTP with the API's error renderer: a failure before the first byte is the
 * usual JSON error, one after it cuts the connection, and a download that works carries the
 * attachment headers. The row sources are generated here; the writers are the real ones.
 */

const tabular = { contextColumns: [], itemKinds: ['post' as const] };

function row(i: number): ExportRow {
  return {
    item: { kind: 'post', platform: 'instagram', id: String(i), username: 'u', caption: `caption ${i}`, url: null, published_at: null },
  };
}

// eslint-disable-next-line @typescript-eslint/require-await -- the writers read an async source; these rows are made in memory
async function* rows(count: number, failAfter = Infinity): AsyncGenerator<ExportRow[]> {
  for (let start = 0; start < count; start += 100) {
    if (start >= failAfter) throw new Error('page load failed');
    yield Array.from({ length: Math.min(100, count - start) }, (_, i) => row(start + i));
  }
}

async function* items(count: number, failAfter = Infinity): AsyncGenerator<unknown[]> {
  for await (const page of rows(count, failAfter)) yield page.map((r) => r.item);
}

type Writer = (out: NodeJS.WritableStream) => Promise<unknown>;

function appWith(write: () => Writer): express.Express {
  const app = express();
  app.get('/download', async (_req, res, next) => {
    try {
      await sendDownload(res, 'job', 'job_01ABC', 'csv', write());
    } catch (error) {
      next(error);
    }
  });
  app.use(renderErrors(pino({ level: 'silent' })));
  return app;
}

/** Fetches over a real socket; resolves with what arrived and whether the connection broke. */
async function fetchRaw(
  app: express.Express,
): Promise<{ status?: number; headers?: http.IncomingHttpHeaders; body: string; broken: boolean }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    return await new Promise((resolve) => {
      const parts: Buffer[] = [];
      const req = http.get(`http://127.0.0.1:${port}/download`, (res) => {
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString('utf8'), broken: false }),
        );
        res.on('error', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString('utf8'), broken: true }),
        );
        res.on('aborted', () => undefined);
      });
      req.on('error', () => resolve({ body: Buffer.concat(parts).toString('utf8'), broken: true }));
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('sendDownload', () => {
  it('sends the attachment headers and the whole body', async () => {
    const res = await request(appWith(() => (out) => writeCsv(rows(5000), out, tabular))).get('/download');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="job_01ABC.csv"');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text.split('\r\n').filter(Boolean)).toHaveLength(5001);
  });

  it.each([
    ['csv', (): Writer => (out) => writeCsv(rows(5000, 0), out, tabular)],
    ['json', (): Writer => (out) => writeJson(items(5000, 0), out)],
    ['xlsx', (): Writer => (out) => writeXlsx(rows(5000, 0), out, tabular)],
  ])('answers the JSON error when the %s source fails before the first byte', async (_format, writer) => {
    const res = await request(appWith(writer)).get('/download');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.body.detail.error).toBe('internal_error');
  });

  it.each([
    ['csv', (): Writer => (out) => writeCsv(rows(20_000, 10_000), out, tabular)],
    ['json', (): Writer => (out) => writeJson(items(20_000, 10_000), out)],
    ['xlsx', (): Writer => (out) => writeXlsx(rows(20_000, 10_000), out, tabular)],
  ])('cuts the connection when the %s source fails after the first byte', async (_format, writer) => {
    const got = await fetchRaw(appWith(writer));
    expect(got.status).toBe(200);
    expect(got.body.length).toBeGreaterThan(0);
    expect(got.broken).toBe(true);
  });

  it('answers an empty JSON export that is ready at once', async () => {
    const res = await request(appWith(() => (out) => writeJson(items(0), out))).get('/download');
    expect(res.status).toBe(200);
    expect(res.text).toBe('[]');
  });
});
