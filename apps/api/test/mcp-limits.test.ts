import { type SeededWorkspace, type ServedStack, startServedStack } from '@sdx/testing';

/**
 * extensions-3.md 1, over HTTP: `/mcp` inside the workspace's rate limit. The review's
 * reproduction (a workspace limited to 2 requests a minute sending one POST with a 50-call
 * batch) is refused whole and creates nothing; each POST takes one point; past the limit a
 * tools/call is a tool error with retry_after and the tool does not run, any other message 429.
 */
let served: ServedStack;
const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

beforeAll(async () => {
  served = await startServedStack({ withWorker: false });
}, 60_000);
afterAll(async () => {
  await served.close();
});

/** A JSON-RPC answer of /mcp, as these tests read it. */
interface RpcAnswer {
  jsonrpc?: string;
  id?: number | string | null;
  error?: { code: number; message: string };
  result?: {
    isError?: boolean;
    structuredContent?: { error?: string; retry_after?: number; limit?: number };
    content?: Array<{ type: string; text: string }>;
    tools?: unknown[];
  };
}

/** One POST to /mcp: its status, Retry-After, and the JSON-RPC answer (from JSON or the event stream). */
async function post(key: string, message: unknown): Promise<{ status: number; retryAfter: string | null; body: RpcAnswer }> {
  const res = await fetch(`${served.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'X-API-Key': key },
    body: JSON.stringify(message),
  });
  const text = await res.text();
  let body: RpcAnswer = {};
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as RpcAnswer);
    body = data.find((d) => d.id !== undefined) ?? {};
  } else if (text) {
    body = JSON.parse(text) as RpcAnswer;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

const startJob = (id: number, target: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'start_job', arguments: { platform: 'twitter', operation: 'followers', target, limit: 10 } },
});

async function jobsOf(ws: SeededWorkspace): Promise<number> {
  const row = await served.stack.runtime.db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', ws.workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('/mcp inside the limits', () => {
  it('the 50-call batch of a workspace limited to 2 a minute: 400 -32600, no job; single calls past the limit are tool errors that create nothing', async () => {
    const ws = await served.stack.workspace({ credits: 100_000, rateLimitPerMinute: 2 });
    const batch = Array.from({ length: 50 }, (_, i) => startJob(i + 1, `batch_${i}`));
    const refused = await post(ws.apiKey, batch);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/batch/i) }, id: null });
    expect(await jobsOf(ws)).toBe(0);

    // The batch's POST took the first point; this call takes the second and runs.
    const allowed = await post(ws.apiKey, startJob(100, 'single_ok'));
    expect(allowed.status).toBe(200);
    expect(allowed.body.result!.isError).toBeFalsy();
    expect(await jobsOf(ws)).toBe(1);

    for (let i = 0; i < 3; i += 1) {
      const past = await post(ws.apiKey, startJob(200 + i, `past_${i}`));
      expect(past.status).toBe(200);
      expect(past.body.id).toBe(200 + i);
      expect(past.body.result!.isError).toBe(true);
      expect(past.body.result!.structuredContent).toMatchObject({
        error: 'rate_limit_exceeded',
        retry_after: expect.any(Number),
        limit: 2,
      });
      expect(past.body.result!.structuredContent!.retry_after).toBeGreaterThanOrEqual(1);
      expect(past.body.result!.structuredContent!.retry_after).toBeLessThanOrEqual(60);
      expect(past.body.result!.content![0].text).toMatch(/rate_limit_exceeded/);
    }
    expect(await jobsOf(ws)).toBe(1);
  });

  it('a batch of one message is refused too; a tools/call past the limit runs nothing of any tool; other messages past it are 429 with Retry-After', async () => {
    const ws = await served.stack.workspace({ credits: 100_000, rateLimitPerMinute: 3 });
    const one = await post(ws.apiKey, [startJob(1, 'alone')]);
    expect(one.status).toBe(400);
    expect(one.body.error!.code).toBe(-32600);
    const list = await post(ws.apiKey, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(list.status).toBe(200);
    expect(list.body.result!.tools!.length).toBeGreaterThan(0);
    const usage = await post(ws.apiKey, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_usage', arguments: {} } });
    expect(usage.body.result!.isError).toBeFalsy();

    // Past the limit: even a read-only tool does not run, and an unknown one is not looked up.
    const read = await post(ws.apiKey, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_usage', arguments: {} } });
    expect(read.body.result).toMatchObject({ isError: true, structuredContent: { error: 'rate_limit_exceeded' } });
    const listPast = await post(ws.apiKey, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(listPast.status).toBe(429);
    expect(Number(listPast.retryAfter)).toBeGreaterThanOrEqual(1);
    const notification = await post(ws.apiKey, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notification.status).toBe(429);
    expect(await jobsOf(ws)).toBe(0);
  });

  it('a body that is not JSON is a JSON-RPC parse error', async () => {
    const ws = await served.stack.workspace({ credits: 100, rateLimitPerMinute: 100 });
    const res = await fetch(`${served.url}/mcp`, { method: 'POST', headers: { ...headers, 'X-API-Key': ws.apiKey }, body: '[{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });
});
