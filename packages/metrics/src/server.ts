import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './series';

/** One dependency check of /readyz: resolves when the dependency answers. */
export type ReadinessCheck = () => Promise<unknown>;

export interface MetricsServerOptions {
  port: number;
  /** Default: every interface, so Prometheus and the kubelet reach it in a pod. */
  host?: string;
  /** Named checks of /readyz (postgres, redis); each must answer within `checkTimeoutMs`. */
  checks: Record<string, ReadinessCheck>;
  checkTimeoutMs?: number;
}

export interface MetricsServer {
  /** The port it listens on (the one asked for, or the one given for port 0). */
  port: number;
  /** From now on /readyz answers 503 `draining` (the process is shutting down). */
  drain(): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function within(check: ReadinessCheck, ms: number): Promise<'ok' | 'error'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), ms);
      }),
    ]);
    return 'ok';
  } catch {
    return 'error';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The operations port of a process without an HTTP API (worker, scheduler), on METRICS_PORT:
 *   GET /metrics  the registry, in Prometheus' text format;
 *   GET /healthz  200 while the process runs (liveness);
 *   GET /readyz   200 when every check answers, 503 otherwise or once draining (readiness).
 * Bodies are JSON, as on the API; anything else is 404 or 405.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const timeoutMs = options.checkTimeoutMs ?? 1000;
  let draining = false;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const known = path === '/metrics' || path === '/healthz' || path === '/readyz';
    if (!known) return send(res, 404, { detail: { error: 'not_found', message: `No route for ${req.method} ${path}.` } });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(res, 405, { detail: { error: 'method_not_allowed', message: `${req.method} is not allowed on ${path}.` } });
    }
    if (path === '/healthz') return send(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      const names = Object.keys(options.checks);
      const results = await Promise.all(names.map((name) => within(options.checks[name], timeoutMs)));
      const checks = Object.fromEntries(names.map((name, i) => [name, results[i]]));
      const ok = !draining && results.every((r) => r === 'ok');
      return send(res, ok ? 200 : 503, { status: ok ? 'ok' : draining ? 'draining' : 'error', checks });
    }
    const body = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
    res.end(body);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else send(res, 500, { detail: { error: 'internal_error', message: err instanceof Error ? err.message : 'metrics failed' } });
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    drain() {
      draining = true;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
