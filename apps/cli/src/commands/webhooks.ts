import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Command, Option } from 'commander';
import { WebhookVerificationError, type WebhookEventType } from '@sdx/sdk';
import { action, integer } from '../args';
import { CliError, EXIT, UsageError } from '../exit-codes';

/**
 * `sdx webhooks listen --forward-to URL`: registers a temporary webhook endpoint whose URL is a
 * relay this command runs, and forwards each delivery to URL with the service's own signature
 * headers, so a local handler verifies exactly what production will send (with the secret
 * printed at start). Ctrl-C deletes the endpoint. docs/cli.md says why this and not a stream.
 */
export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('webhook tools');

  webhooks
    .command('listen')
    .description("forward the workspace's webhook events to a local URL until Ctrl-C")
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:4242/webhooks')
    // Each default said once, in words: commander prints the description given to default().
    .addOption(new Option('--events <types>', 'comma-separated event types').default('*', 'all'))
    .option('--host <host>', 'address the relay listens on', '127.0.0.1')
    .addOption(new Option('--port <port>', 'port the relay listens on').argParser(integer(0)).default(0, 'any free one'))
    .option('--public-url <url>', "the relay's URL as the service reaches it (a tunnel), when the service cannot reach --host")
    .action(
      action(async (ctx, options: { forwardTo: string; events: string; host: string; port: number; publicUrl?: string }) => {
        const target = parseUrl(options.forwardTo, '--forward-to');
        const events = options.events
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean) as Array<WebhookEventType | '*'>;
        const sdx = ctx.client();
        const out = ctx.out;
        let secret = '';

        const relay = http.createServer((req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (chunk: Buffer) => chunks.push(chunk));
          req.on('end', () => {
            forward(Buffer.concat(chunks), req.headers, res).catch((error: unknown) => {
              // forward answers the failures it expects itself; this is for anything else
              if (!res.headersSent) res.writeHead(500);
              res.end();
              report({ forwarded: false, error: `the relay failed: ${error instanceof Error ? error.message : String(error)}` });
            });
          });
        });

        /** Verifies one delivery, forwards it to --forward-to and answers with what that answered. */
        async function forward(body: Buffer, headersIn: http.IncomingHttpHeaders, res: http.ServerResponse): Promise<void> {
          let event;
          try {
            event = await sdx.webhooks.verify(body, headersIn, secret);
          } catch (error) {
            res.writeHead(400).end();
            const why = error instanceof WebhookVerificationError ? error.message : String(error);
            report({ forwarded: false, error: `refused an unsigned or wrongly signed request: ${why}` });
            return;
          }
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) headers[name] = String(headersIn[name]);
          try {
            const answer = await fetch(target, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
            const text = await answer.text();
            res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' }).end(text);
            report({ forwarded: true, event_id: event.id, type: event.type, status: answer.status });
          } catch (error) {
            res.writeHead(502).end();
            report({
              forwarded: false,
              event_id: event.id,
              type: event.type,
              error: `could not reach ${target.href}: ${(error as Error).message}`,
            });
          }
        }

        function report(line: { forwarded: boolean; event_id?: string; type?: string; status?: number; error?: string }) {
          if (out.json) {
            out.line(JSON.stringify(line));
            return;
          }
          const c = out.colors;
          if (line.forwarded)
            out.line(
              `${new Date().toISOString()}  --> ${c.bold(line.type)} ${line.event_id}  <-- [${line.status! < 300 ? c.green(String(line.status)) : c.red(String(line.status))}] POST ${target.href}`,
            );
          else out.line(`${new Date().toISOString()}  ${c.red('!!')} ${line.type ?? ''} ${line.event_id ?? ''} ${line.error}`);
        }

        await new Promise<void>((resolve, reject) => {
          relay.once('error', reject);
          relay.listen(options.port, options.host, resolve);
        }).catch((error: Error) => {
          throw new CliError(`cannot listen on ${options.host}:${options.port}: ${error.message}`, EXIT.failure);
        });
        const { port } = relay.address() as AddressInfo;
        const url = options.publicUrl
          ? parseUrl(options.publicUrl, '--public-url').href
          : `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/`;

        let endpointId: string | undefined;
        const cleanUp = async () => {
          relay.closeAllConnections();
          relay.close();
          if (endpointId) await sdx.webhooks.delete(endpointId).catch(() => undefined);
        };
        try {
          const endpoint = await sdx.webhooks.create({
            url,
            events,
            description: 'sdx webhooks listen (temporary; deleted when it stops)',
          });
          endpointId = endpoint.id;
          secret = endpoint.secret;
          if (out.json) out.line(JSON.stringify({ ready: true, webhook_id: endpoint.id, url, forward_to: target.href, events, secret }));
          else {
            out.note(`Registered ${endpoint.id} → ${url} for ${events.join(', ')}; forwarding to ${target.href}.`);
            out.note(
              `Signing secret: ${out.errColors.bold(endpoint.secret)} (verify deliveries with it; it is deleted with the endpoint).`,
            );
            out.note('Ctrl-C stops listening and deletes the endpoint.');
          }
        } catch (error) {
          await cleanUp();
          throw error;
        }

        await ctx
          .interruptible(
            (signal) =>
              new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
            () => out.note(`\nStopped; deleting ${endpointId}.`),
          )
          .finally(cleanUp);
      }),
    );
}

function parseUrl(value: string, option: string): URL {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url;
  } catch {
    // reported below
  }
  throw new UsageError(`${option} needs an http(s) URL, got ${value}`);
}
