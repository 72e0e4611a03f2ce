import { readdirSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * Issue 52: a console page load asks for many static files; at info each API request is one
 * line with its (redacted) headers, but the console's assets are not logged at info at all, and
 * at debug in one short line without headers.
 */
const logged: string[] = [];
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => void logged.push(line) } });
});
afterAll(async () => {
  await stack.close();
});

const lines = () => logged.map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url?: string; headers?: unknown } });

it('logs an API request at info with its headers, and a console asset not at all', async () => {
  const asset = readdirSync(path.resolve(__dirname, '../../console/dist/assets')).find((file) => file.endsWith('.js'))!;
  // The console's files are not API operations: fetched as a browser does, outside the contract client.
  expect((await request(stack.app).get(`/console/assets/${asset}`)).status).toBe(200);
  expect((await stack.api.get('/v1/platforms')).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const requests = lines().filter((line) => line.msg === 'request completed' || line.msg === 'asset served');
  expect(requests.some((line) => line.req?.url === '/v1/platforms' && line.req.headers !== undefined)).toBe(true);
  expect(requests.filter((line) => line.req?.url?.startsWith('/console/assets/'))).toEqual([]);
});

it('logs a console asset at debug in one line without headers', async () => {
  const debug = await startTestStack({ env: { LOG_LEVEL: 'debug' }, logDestination: { write: (line: string) => void logged.push(line) } });
  try {
    logged.length = 0;
    const asset = readdirSync(path.resolve(__dirname, '../../console/dist/assets')).find((file) => file.endsWith('.js'))!;
    expect((await request(debug.app).get(`/console/assets/${asset}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const served = lines().filter((line) => line.req?.url === `/console/assets/${asset}`);
    expect(served).toHaveLength(1);
    expect(served[0]).toMatchObject({ level: 20, msg: 'asset served' });
    expect(served[0].req!.headers).toBeUndefined();
  } finally {
    await debug.close();
  }
});
