import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createGraphApi } from './graph';
import { createScrapeCreatorsApi } from './scrapecreators';
import { createTikTokApi } from './tiktok';
import {
  createForms,
  serialize,
  type FakeApi,
  type FormMode,
  type Forms,
  type FakeRequest,
  type FakeResponse,
  type MisbehaveRule,
} from './util';
import { createXApi } from './x';
import { createYouTubeApi } from './youtube';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  /** The status and body the fake answered with (absent while the answer is pending or when the socket was destroyed). */
  response?: { status: number; body: unknown };
}

export interface FakeUpstream {
  /** Root URL, e.g. http://127.0.0.1:43210 (YouTube under /youtube/v3, X under /2, TikTok under /v2, Graph under /v26.0, ScrapeCreators under /scrapecreators). */
  url: string;
  close(): Promise<void>;
  /** Make the next `rule.times` requests under `rule.path` misbehave. */
  misbehave(rule: MisbehaveRule): void;
  /** Forget rules, recorded requests and per-API state (issued tokens, rate-limit counters). */
  reset(): void;
  /** Every request received, in order (credentials are not recorded). */
  requests: RecordedRequest[];
  /** The seed of the forms the fake picks between (see Forms); FAKE_UPSTREAM_SEED replays a run. */
  seed: number;
}

export interface FakeUpstreamOptions {
  /** Which form to send where a published example and its field table disagree (default random). */
  forms?: FormMode;
  /** Seed of the random forms (default FAKE_UPSTREAM_SEED, else random). */
  seed?: number;
}

function seedOf(options: FakeUpstreamOptions): number {
  if (options.seed !== undefined) return options.seed;
  const env = Number(process.env.FAKE_UPSTREAM_SEED);
  return Number.isInteger(env) && process.env.FAKE_UPSTREAM_SEED ? env : Math.floor(Math.random() * 2 ** 31);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return null;
  const text = Buffer.concat(chunks).toString('utf8');
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function send(res: ServerResponse, answer: FakeResponse): void {
  const text = typeof answer.body === 'string' ? answer.body : serialize(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=UTF-8', ...(answer.headers ?? {}) });
  res.end(text);
}

/**
 * A fake of the upstream APIs (four official, one vendor) on 127.0.0.1 (port 0): one HTTP server, one path prefix per
 * API, so each adapter's base URL points at it.
 */
export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const seed = seedOf(options);
  const forms: Forms = createForms(options.forms ?? 'random', seed);
  if (forms.mode === 'random')
    process.stderr.write(`fake upstream: FAKE_UPSTREAM_SEED=${seed} (example and field-table forms picked at random)\n`);
  const apis: FakeApi[] = [createYouTubeApi(), createXApi(forms), createTikTokApi(forms), createGraphApi(), createScrapeCreatorsApi()];
  let rules: Array<MisbehaveRule & { left: number }> = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const delays = new Set<() => void>();
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        delays.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      delays.add(done);
    });

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const query: Record<string, string> = {};
      for (const [k, v] of url.searchParams) if (k !== 'access_token' && k !== 'key') query[k] = v;
      const body = await readBody(req);
      const recordedBody =
        body && typeof body === 'object' && 'client_secret' in body
          ? { ...(body as Record<string, unknown>), client_secret: '[redacted]' }
          : body;
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query, body: recordedBody };
      requests.push(recorded);
      const reply = (answer: FakeResponse): void => {
        recorded.response = {
          status: answer.status,
          body: typeof answer.body === 'string' ? answer.body : JSON.parse(serialize(answer.body)),
        };
        send(res, answer);
      };
      const fake: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
        headers: req.headers,
      };
      const api = apis.find((a) => a.matches(fake.path));
      if (!api) return reply({ status: 404, body: { error: 'no such fake upstream path' } });
      const rule = rules.find((r) => r.left > 0 && fake.path.startsWith(r.path));
      if (rule) {
        rule.left -= 1;
        if (rule.kind === 'reset') {
          req.socket.destroy();
          return;
        }
        if (rule.kind === 'slow') {
          await sleep(rule.delayMs ?? 1000);
          if (res.destroyed || req.socket.destroyed) return;
        } else if (rule.kind === 'reply' && rule.reply) {
          return reply(rule.reply);
        } else {
          return reply(api.misbehave(rule, fake));
        }
      }
      reply(api.handle(fake));
    })().catch((error: unknown) => {
      if (!res.headersSent) send(res, { status: 500, body: { error: String(error) } });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    seed,
    misbehave(rule) {
      rules.push({ ...rule, left: rule.times ?? 1 });
    },
    reset() {
      rules = [];
      requests.length = 0;
      for (const api of apis) api.reset?.();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      for (const done of [...delays]) done();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
