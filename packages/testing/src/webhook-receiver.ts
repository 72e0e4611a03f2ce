import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { loadOpenApiDocument } from '@sdx/contract';

/** One message a receiver got: the exact bytes of the body, its headers, when it arrived. */
export interface ReceivedMessage {
  headers: Record<string, string>;
  body: string;
  at: number;
  /** When the sender closed the connection before an answer came (a hung request cut off), else null. */
  abortedAt: number | null;
}

/** How a receiver answers its nth message (0-based): a status, or no answer at all (it hangs). */
export type Answer = { status: number } | 'hang';

export interface WebhookReceiver {
  url: string;
  messages: ReceivedMessage[];
  /** Resolves once `count` messages arrived. */
  received(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback (an outside thing the tests fake): records every POST, answers
 * as `answer` says (204 by default), and can hang to test the sender's timeout.
 */
export async function startWebhookReceiver(
  answer: (n: number, message: ReceivedMessage) => Answer = () => ({ status: 204 }),
): Promise<WebhookReceiver> {
  const messages: ReceivedMessage[] = [];
  const waiters: Array<() => void> = [];
  const hung = new Set<ServerResponse>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const message: ReceivedMessage = {
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        abortedAt: null,
      };
      const n = messages.length;
      messages.push(message);
      for (const wake of waiters.splice(0)) wake();
      const reply = answer(n, message);
      if (reply === 'hang') {
        hung.add(res);
        res.on('close', () => {
          if (!res.writableEnded) message.abortedAt = Date.now();
          hung.delete(res);
        });
        return;
      }
      res.statusCode = reply.status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    messages,
    async received(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the receiver got ${messages.length} of ${count} messages within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 250));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return messages.slice(0, count);
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let ajv: Ajv | null = null;

/** The problems of `value` against the openapi.yaml component schema `name` (empty when it conforms). */
export function schemaProblems(name: string, value: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: loadOpenApiDocument().components });
  }
  const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name} in openapi.yaml`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
