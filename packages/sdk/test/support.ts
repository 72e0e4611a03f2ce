import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, type ClientOptions } from '@sdx/sdk';
import { createResponseValidator, type SeededWorkspace } from '@sdx/testing';

const validator = createResponseValidator();

/** Every request the SDK sent, as the fetch saw it. */
export interface Sent {
  method: string;
  path: string;
  headers: Headers;
}

/**
 * A fetch that checks each answer of a documented operation against openapi.yaml (the SDK must
 * call the contract's operations exactly), and records what was sent.
 */
export function contractFetch(sent: Sent[] = []): (input: Request) => Promise<Response> {
  return async (input) => {
    const url = new URL(input.url);
    sent.push({ method: input.method, path: url.pathname + url.search, headers: new Headers(input.headers) });
    const response = await fetch(input);
    if (validator.match(input.method, url.pathname)) {
      const contentType = response.headers.get('content-type') ?? undefined;
      const body = contentType?.includes('application/json') ? await response.clone().json() : undefined;
      validator.validate(input.method, url.pathname, response.status, body, contentType);
    }
    return response;
  };
}

export function clientFor(
  url: string,
  ws: Pick<SeededWorkspace, 'apiKey'> | null,
  options: ClientOptions & { sent?: Sent[] } = {},
): Client {
  const { sent, ...rest } = options;
  return new Client({ baseUrl: url, apiKey: ws?.apiKey, fetch: contractFetch(sent), retry: { baseDelayMs: 10, maxDelayMs: 50 }, ...rest });
}

export interface ProxyRule {
  /** Decides what the proxy does with a request: pass it on, or answer itself. */
  (request: {
    method: string;
    path: string;
    headers: http.IncomingHttpHeaders;
    count: number;
  }): 'pass' | 'drop-response' | { status: number; headers?: Record<string, string>; body?: unknown };
}

/**
 * A loopback HTTP proxy in front of the service, playing the network: it passes requests on, or
 * sends one to the service and cuts the connection before the answer reaches the client, or
 * answers itself (a 429 or 503 of a load balancer).
 */
export async function startProxy(
  target: string,
  rule: ProxyRule,
): Promise<{ url: string; seen: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }>; close(): Promise<void> }> {
  const seen: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }> = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const key = `${req.method} ${req.url}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      seen.push({ method: req.method!, path: req.url!, headers: req.headers });
      const decision = rule({ method: req.method!, path: req.url!, headers: req.headers, count });
      if (typeof decision === 'object') {
        res.writeHead(decision.status, { 'content-type': 'application/json', ...decision.headers });
        res.end(decision.body === undefined ? '' : JSON.stringify(decision.body));
        return;
      }
      const upstream = http.request(
        new URL(req.url!, target),
        { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
        (answer) => {
          if (decision === 'drop-response') {
            answer.resume();
            answer.on('end', () => req.socket.destroy());
            return;
          }
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
