import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';

/** A loopback HTTP server for an in-process app; close() ends idle keep-alive sockets too. */
export async function serve(app: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(app);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export interface SentRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Reply {
  status: number;
  body: string;
}

/** One request over a keep-alive agent; resolves with the status and the whole body. */
export function send(agent: http.Agent, baseUrl: string, req: SentRequest): Promise<Reply> {
  const url = new URL(req.path, baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(req.body);
    }
    const r = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: req.method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export function keepAliveAgent(maxSockets = 256): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets });
}
