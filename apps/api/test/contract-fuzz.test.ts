import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createApiServer } from '@sdx/app-api';
import { loadOpenApiDocument } from '@sdx/contract';
import { createResponseValidator, ResponseContractError } from '@sdx/testing';
import { type FuzzOperation, type FuzzRequest, fuzzOperations, requestArbitrary, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * The contract fuzzer: FUZZ_REQUESTS requests (10,000 by default, the CI figure) generated from
 * openapi.yaml for every operation, valid and mutated (missing and unknown keys, values of the
 * wrong kind, text Postgres cannot store, strict-integer breakers, deep and oversize bodies,
 * other content types, no or foreign credentials, foreign and hostile IDs), sent over HTTP to
 * the API with a worker running. IDs the service creates are reused by later requests. Every
 * response must be documented by openapi.yaml (status, content type, body schema), and none
 * may be a 5xx. FUZZ_SEED replays a run.
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? 17_2026);
const CONCURRENCY = 8;

/**
 * Operations whose success needs a browser session (a cookie and CSRF token), a real sign-up, or
 * IDs of the accounts side (team workspaces, invitations, keys) that the fuzzer, calling with API
 * keys, does not create. They are fuzzed like every other operation (0 5xx, 0 contract breaks);
 * their successes are covered by the accounts tests (auth-sessions, teams, keys-audit).
 */
const ACCOUNT_OPERATIONS = new Set([
  'signUp', 'logIn', 'getSession', 'logOut', 'changePassword', 'createWorkspace', 'listMembers', 'removeMember',
  'listInvitations', 'createInvitation', 'revokeInvitation', 'acceptInvitation', 'revokeKey',
]);

let stack: TestStack;
let main: SeededWorkspace;
let other: SeededWorkspace;
let server: http.Server;
let base: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

beforeAll(async () => {
  // Webhook hosts resolve to loopback (a fake DNS, allowed here): nothing leaves the machine.
  stack = await startTestStack({
    withWorker: true,
    workerConcurrency: 8,
    env: { SYNC_TIMEOUT_MS: '1500', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' },
    webhookResolver: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  const ample = { credits: 1_000_000_000, rateLimitPerMinute: 1_000_000_000, maxActiveJobs: 1_000_000, maxResultLimit: 25_000 };
  main = await stack.workspace(ample);
  other = await stack.workspace(ample);
  server = createApiServer(stack.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  agent.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await stack.close();
});

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) all['content-length'] = Buffer.byteLength(body);
    const req = http.request(`${base}${path}`, { agent, method: method.toUpperCase(), headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const reply = () => ({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') });
      res.on('end', () => resolve(reply()));
      // A live stream lasts until its job or batch ends: its status and headers are what is checked.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        resolve(reply());
        res.destroy();
      }
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** IDs by path parameter, created by the fuzzed workspace or by the other one. */
const POOL_OF: Record<string, RegExp> = { job_id: /^job_/, batch_id: /^bat_/, schedule_id: /^sch_/, webhook_id: /^whk_/, delivery_id: /^dlv_/ };
const created: Record<string, string[]> = { job_id: [], batch_id: [], schedule_id: [], webhook_id: [], delivery_id: [] };
const foreign: Record<string, string[]> = { job_id: [], batch_id: [], schedule_id: [], webhook_id: [], delivery_id: [] };

function harvest(value: unknown, into: Record<string, string[]>, depth = 0): void {
  if (depth > 3 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 20)) harvest(item, into, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const [param, pattern] of Object.entries(POOL_OF)) {
    const id = record.id;
    if (typeof id === 'string' && pattern.test(id) && !into[param]!.includes(id)) {
      into[param]!.push(id);
      if (into[param]!.length > 200) into[param]!.shift();
    }
  }
  if (Array.isArray(record.jobs)) harvest(record.jobs, into, depth + 1);
}

/**
 * POST /v1/extract answers 502 extraction_failed when its job ends without a result, and a
 * fuzzed cancel of a harvested job ID may be the one that ended it (cause `cancelled`): the
 * documented answer to what the fuzzer itself did, not a server error. It is still checked
 * against openapi.yaml like every answer.
 */
function cancelledWhileWaiting(op: FuzzOperation, reply: Reply): boolean {
  if (op.operationId !== 'extract' || reply.status !== 502) return false;
  try {
    const detail = (JSON.parse(reply.text) as { detail?: { error?: string; cause?: { code?: string } } }).detail;
    return detail?.error === 'extraction_failed' && detail.cause?.code === 'cancelled';
  } catch {
    return false;
  }
}

function pathOf(request: FuzzRequest): string {
  let path = request.operation.template;
  for (const [name, choice] of Object.entries(request.ids)) {
    let value: string;
    if (choice.kind === 'literal') value = choice.value;
    else {
      const pool = (choice.kind === 'created' ? created : foreign)[name] ?? [];
      value = pool.length ? encodeURIComponent(pool[choice.pick % pool.length]!) : 'job_none';
    }
    path = path.replace(`{${name}}`, value);
  }
  if (request.query.length) path += `?${request.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`.replace(/%2500/g, '%00')).join('&')}`;
  return path;
}

function headersOf(request: FuzzRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = name === 'X-Workspace-ID' && value === 'self' ? main.workspaceId : value;
  switch (request.credential) {
    case 'valid':
      headers['X-API-Key'] = main.apiKey;
      break;
    case 'bearer':
      headers.Authorization = `Bearer ${main.apiKey}`;
      break;
    case 'unknown':
      headers['X-API-Key'] = 'sdx_live_00000000000000000000000000000000';
      break;
    case 'other_workspace':
      headers['X-API-Key'] = other.apiKey;
      break;
    case 'none':
      break;
  }
  if (request.body !== undefined) headers['Content-Type'] = request.contentType ?? 'application/json';
  return headers;
}

it(`${REQUESTS} generated requests over every operation: no 5xx, every response as openapi.yaml documents`, async () => {
  const document = loadOpenApiDocument();
  const validator = createResponseValidator();
  const operations = fuzzOperations(document);
  expect(operations.length).toBeGreaterThanOrEqual(20);

  // The other workspace owns a job, a batch and a schedule: their IDs must be not found here.
  const job = await stack.api.post('/v1/jobs', { headers: other.auth, body: { platform: 'instagram', operation: 'profile', target: 'natgeo' } });
  const batch = await stack.api.post('/v1/batches', { headers: other.auth, body: { platform: 'instagram', operation: 'profile', targets: ['nasa', 'natgeo'] } });
  const schedule = await stack.api.post('/v1/schedules', {
    headers: other.auth,
    body: { name: 'other', operation: 'profile', targets: ['nasa'], frequency: 'daily', timezone: 'UTC', starts_at: '2031-01-01T00:00:00Z' },
  });
  const webhook = await stack.api.post('/v1/webhooks', { headers: other.auth, body: { url: 'https://hooks.example.com/other', events: ['*'] } });
  for (const res of [job, batch, schedule, webhook]) harvest(res.body, foreign);

  const arbitrary = fc.oneof(...operations.map((op) => requestArbitrary(document, op)));
  const tally = new Map<string, Map<number, number>>();
  const serverErrors: string[] = [];
  const breaks: string[] = [];
  let sent = 0;
  const started = Date.now();

  const describe = (request: FuzzRequest, path: string, reply: Reply) =>
    `${request.operation.method.toUpperCase()} ${path.slice(0, 160)} [${request.mutation}; ${request.credential}] ${(request.body ?? "").slice(0, 200)} → ${reply.status} ${reply.text.slice(0, 200)}`;

  const runOne = async (request: FuzzRequest) => {
    const op: FuzzOperation = request.operation;
    const path = pathOf(request);
    const reply = await send(op.method, path, headersOf(request), request.body);
    const byStatus = tally.get(op.operationId) ?? new Map<number, number>();
    byStatus.set(reply.status, (byStatus.get(reply.status) ?? 0) + 1);
    tally.set(op.operationId, byStatus);
    if (reply.status >= 500 && !cancelledWhileWaiting(op, reply)) serverErrors.push(describe(request, path, reply));
    const json = /^application\/json/.test(reply.contentType);
    let body: unknown;
    if (json) {
      try {
        body = JSON.parse(reply.text);
      } catch {
        breaks.push(`${describe(request, path, reply)}: body is not JSON`);
        return;
      }
    }
    try {
      validator.validate(op.method, path.split('?')[0]!, reply.status, body, reply.contentType || undefined);
    } catch (error) {
      if (!(error instanceof ResponseContractError)) throw error;
      breaks.push(`${describe(request, path, reply)}: ${error.problems.join('; ')}`);
    }
    if (reply.status < 300 && body !== undefined) harvest(body, request.credential === 'other_workspace' ? foreign : created);
  };

  const CHUNK = 500;
  for (let offset = 0; offset < REQUESTS; offset += CHUNK) {
    const requests = fc.sample(arbitrary, { numRuns: Math.min(CHUNK, REQUESTS - offset), seed: SEED + offset });
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          const request = requests[next++]!;
          await runOne(request);
          sent += 1;
        }
      }),
    );
  }

  const seconds = (Date.now() - started) / 1000;
  const table = [...tally.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, statuses]) => `  ${op}: ${[...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`)
    .join('\n');
  process.stdout.write(
    `contract fuzz: ${sent} requests in ${seconds.toFixed(1)} s (seed ${SEED}); 5xx: ${serverErrors.length}; contract breaks: ${breaks.length}\n${table}\n` +
      (serverErrors.length ? `5xx:\n  ${serverErrors.slice(0, 10).join('\n  ')}\n` : '') +
      (breaks.length ? `breaks:\n  ${breaks.slice(0, 10).join('\n  ')}\n` : ''),
  );

  expect(sent).toBe(REQUESTS);
  expect(serverErrors.slice(0, 10)).toEqual([]);
  expect(breaks.slice(0, 10)).toEqual([]);
  // Every operation was exercised, and valid requests reached the domain: each operation
  // answered a success at least once (given enough requests to make that near certain).
  expect([...tally.keys()].sort()).toEqual(operations.map((op) => op.operationId).sort());
  if (REQUESTS >= 5000) {
    const neverSucceeded = operations
      .filter((op) => !ACCOUNT_OPERATIONS.has(op.operationId))
      .filter((op) => ![...(tally.get(op.operationId)?.keys() ?? [])].some((s) => s < 300))
      .map((op) => op.operationId);
    expect(neverSucceeded).toEqual([]);
  }
}, 900_000);
