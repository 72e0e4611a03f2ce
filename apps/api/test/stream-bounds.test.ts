import http from 'node:http';
import type { Server } from 'node:http';
import { createApp, LiveHub, RedisRateLimiter } from '@sdx/app-api';
import { eventually, grantWorkspaceCredits, listen, type SeededWorkspace, signUpUser, startTestStack, type TestStack } from '@sdx/testing';

/**
 * extensions-2.md 2, over HTTP and real sockets: at most MAX_STREAMS_PER_WORKSPACE event streams
 * open at once per workspace across API processes (two apps on one Redis stand for two
 * processes), a closed stream frees its slot, a crashed process's slots age out, and a stream
 * ends within the recheck interval of its key's revocation or its session's end.
 */
const LIMIT = 3;
const RECHECK_MS = 400;

let stack: TestStack;
const processes: Array<{ base: string; server: Server; live: LiveHub }> = [];
let ws: SeededWorkspace;

/** Another API process: its own app and live hub (its own Redis connections), on the stack's services. */
async function apiProcess(): Promise<{ base: string; server: Server; live: LiveHub }> {
  const { runtime, config } = stack;
  const live = new LiveHub({
    db: runtime.db,
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    log: runtime.log,
    recheckMs: RECHECK_MS,
  });
  const app = createApp({
    services: runtime.services,
    registry: runtime.registry,
    limiter: new RedisRateLimiter(runtime.redis, config.redisPrefix),
    redis: runtime.redis,
    live,
  });
  const { url, server } = await listen(app);
  return { base: url, server, live };
}

beforeAll(async () => {
  stack = await startTestStack({ env: { MAX_STREAMS_PER_WORKSPACE: String(LIMIT) } });
  processes.push(await apiProcess(), await apiProcess());
  ws = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  for (const { server, live } of processes) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await live.close();
  }
  await stack.close();
});

interface Stream {
  status: number;
  body: string;
  ended: boolean;
  endedAt: Promise<number>;
  close(): void;
}

/** Opens a stream on one process; resolves once its status line is in. */
function open(base: string, path: string, headers: Record<string, string>): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      let markEnded: (at: number) => void = () => undefined;
      const stream: Stream = {
        status: res.statusCode!,
        body: '',
        ended: false,
        endedAt: new Promise((done) => (markEnded = done)),
        close: () => request.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (stream.body += chunk));
      const end = () => {
        stream.ended = true;
        markEnded(Date.now());
      };
      res.on('end', end);
      res.on('close', end);
      res.on('error', () => undefined);
      resolve(stream);
    });
    request.on('error', reject);
  });
}

/** A job that stays queued (this stack runs no worker), so its stream stays open. */
async function pendingJob(headers: Record<string, string>): Promise<string> {
  const res = await stack.api.post('/v1/jobs', {
    headers,
    body: { platform: 'twitter', operation: 'followers', target: `stream${Math.random().toString(36).slice(2, 8)}`, limit: 10 },
  });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

const slotsKey = (workspaceId: string) => `${stack.config.redisPrefix}:live:streams:${workspaceId}`;

it('admits MAX_STREAMS_PER_WORKSPACE streams across processes; one more is 429 stream_limit_exceeded; closing one frees a slot', async () => {
  const job = await pendingJob(ws.auth);
  const [a, b] = processes as [(typeof processes)[0], (typeof processes)[0]];
  const open1 = await open(a.base, `/v1/jobs/${job}/events`, ws.auth);
  const open2 = await open(b.base, `/v1/jobs/${job}/events`, ws.auth);
  const open3 = await open(a.base, `/v1/jobs/${job}/events`, ws.auth);
  expect([open1.status, open2.status, open3.status]).toEqual([200, 200, 200]);
  await eventually(() => open1.body.includes('event: status'));

  // One past the limit, on either process and on the stack's own app (validated against openapi.yaml).
  const refused = await stack.api.get(`/v1/jobs/${job}/events`, { headers: ws.auth });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ detail: { error: 'stream_limit_exceeded', message: expect.any(String), limit: LIMIT } });
  const refusedB = await open(b.base, `/v1/jobs/${job}/events`, ws.auth);
  expect(refusedB.status).toBe(429);
  await refusedB.endedAt;
  expect(JSON.parse(refusedB.body)).toMatchObject({ detail: { error: 'stream_limit_exceeded', limit: LIMIT } });

  // Batches count against the same bound; other workspaces have their own.
  const other = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
  const otherStream = await open(b.base, `/v1/jobs/${await pendingJob(other.auth)}/events`, other.auth);
  expect(otherStream.status).toBe(200);
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { operation: 'posts', limit: 10, targets: ['bounds_a', 'bounds_b'] },
  });
  expect(batch.status).toBe(202);
  expect((await stack.api.get(`/v1/batches/${batch.body.id}/events`, { headers: ws.auth })).status).toBe(429);

  open2.close();
  const reopened = await eventually(async () => {
    const s = await open(a.base, `/v1/batches/${batch.body.id}/events`, ws.auth);
    if (s.status === 200) return s;
    s.close();
    return null;
  }, 5000);
  expect(reopened.status).toBe(200);
  expect(await stack.runtime.redis.zcard(slotsKey(ws.workspaceId))).toBe(LIMIT);

  for (const s of [open1, open3, reopened, otherStream]) s.close();
  await eventually(async () => (await stack.runtime.redis.zcard(slotsKey(ws.workspaceId))) === 0, 5000);
  await eventually(() => processes.every((p) => p.live.stats().streams === 0), 5000);
});

it("a crashed process's streams stop counting when their leases run out", async () => {
  const crashed = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
  const job = await pendingJob(crashed.auth);
  // Slots a process took and will never renew nor release: leases that end in 1.5 s.
  const [seconds] = await stack.runtime.redis.time();
  const until = Number(seconds) * 1000 + 1500;
  await stack.runtime.redis.zadd(slotsKey(crashed.workspaceId), until, 'ghost-1', until, 'ghost-2', until, 'ghost-3');
  expect((await stack.api.get(`/v1/jobs/${job}/events`, { headers: crashed.auth })).status).toBe(429);
  await new Promise((resolve) => setTimeout(resolve, 2600));
  const s = await open(processes[0].base, `/v1/jobs/${job}/events`, crashed.auth);
  expect(s.status).toBe(200);
  s.close();
});

it('a stream ends within the recheck interval of its key being revoked', async () => {
  const created = await stack.api.post('/v1/keys', { headers: ws.auth, body: { name: 'streamer', role: 'viewer' } });
  expect(created.status).toBe(201);
  const key = { 'X-API-Key': created.body.api_key as string };
  const job = await pendingJob(ws.auth);
  const stream = await open(processes[1].base, `/v1/jobs/${job}/events`, key);
  expect(stream.status).toBe(200);
  await eventually(() => stream.body.includes('event: status'));
  // A full recheck interval with the key valid: the stream stays.
  await new Promise((resolve) => setTimeout(resolve, RECHECK_MS * 2));
  expect(stream.ended).toBe(false);

  const revokedAt = Date.now();
  expect((await stack.api.delete(`/v1/keys/${created.body.id}`, { headers: ws.auth })).status).toBe(204);
  const endedAt = await stream.endedAt;
  expect(endedAt - revokedAt).toBeLessThan(RECHECK_MS + 1500);
  await eventually(async () => (await stack.runtime.redis.zcard(slotsKey(ws.workspaceId))) === 0, 5000);
});

it("a session stream ends within the recheck interval of signing out; a removed member's stream ends too", async () => {
  const user = await signUpUser(stack);
  const job = await pendingJob(user.write());
  const stream = await open(processes[0].base, `/v1/jobs/${job}/events`, user.read());
  expect(stream.status).toBe(200);
  await eventually(() => stream.body.includes('event: status'));
  await new Promise((resolve) => setTimeout(resolve, RECHECK_MS * 2));
  expect(stream.ended).toBe(false);

  const loggedOutAt = Date.now();
  expect((await stack.api.post('/v1/auth/logout', { headers: user.write() })).status).toBe(204);
  expect((await stream.endedAt) - loggedOutAt).toBeLessThan(RECHECK_MS + 1500);

  // A member removed from a team: the session lives on, its stream of the team does not.
  const owner = await signUpUser(stack);
  const member = await signUpUser(stack);
  const team = (await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Streams' } })).body.id as string;
  const invited = await stack.api.post(`/v1/workspaces/${team}/invitations`, {
    headers: owner.write(),
    body: { email: member.email, role: 'viewer' },
  });
  expect((await stack.api.post('/v1/invitations/accept', { headers: member.write(), body: { token: invited.body.token } })).status).toBe(
    200,
  );
  // Team workspaces start without credits (NEW_TEAM_WORKSPACE_CREDITS 0): grant what the job reserves.
  await grantWorkspaceCredits(stack, team, 1000);
  const teamJob = await pendingJob(owner.write(team));
  const memberStream = await open(processes[1].base, `/v1/jobs/${teamJob}/events`, member.read(team));
  expect(memberStream.status).toBe(200);
  const removedAt = Date.now();
  expect((await stack.api.delete(`/v1/workspaces/${team}/members/${member.userId}`, { headers: owner.write(team) })).status).toBe(204);
  expect((await memberStream.endedAt) - removedAt).toBeLessThan(RECHECK_MS + 1500);
});
