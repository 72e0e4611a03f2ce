import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { ConnectionError } from '@sdx/sdk';
import { action } from '../args';
import { configPath, removeConfig, settings, writeConfig } from '../config';
import type { Context } from '../context';
import { UsageError } from '../exit-codes';

export function registerSession(program: Command): void {
  program
    .command('login')
    .description('store an API key and the base URL in your config directory (the key is read from a hidden prompt, or from stdin)')
    .option('--base-url <url>', 'the service (default: SDX_BASE_URL, the stored one, or http://localhost:3000)')
    .action(
      action(async (ctx, options: { baseUrl?: string }) => {
        const baseUrl = normalizeUrl(options.baseUrl ?? settings(ctx.env).baseUrl);
        const apiKey = (
          ctx.streams.stdin.isTTY ? await promptHidden(ctx, `API key for ${baseUrl}: `) : await readAll(ctx.streams.stdin)
        ).trim();
        if (apiKey === '') throw new UsageError('no API key given');
        // Stored only once the service accepts it.
        const account = await ctx
          .clientWith(apiKey, baseUrl)
          .account.get()
          .catch((error: unknown) => {
            if (!(error instanceof ConnectionError)) throw error;
            const hint =
              options.baseUrl === undefined
                ? ' Is the service running there? Pass --base-url <url> (or set SDX_BASE_URL) to log in to another one.'
                : ' Is the service running there?';
            throw new ConnectionError(`could not reach ${baseUrl}: ${error.message}.${hint}`, { cause: error });
          });
        const file = writeConfig(ctx.env, { api_key: apiKey, base_url: baseUrl });
        const summary = {
          base_url: baseUrl,
          workspace_id: account.organization_id,
          workspace_name: account.organization_name,
          key_id: account.authenticated_key_id,
          config_path: file,
        };
        ctx.out.result(summary, () => {
          ctx.out.note(
            `Logged in to ${account.organization_name} (${account.organization_id}) at ${baseUrl} with key ${account.authenticated_key_id}.`,
          );
          ctx.out.note(`Saved to ${file} (readable by you only). SDX_API_KEY and SDX_BASE_URL override it.`);
        });
      }),
    );

  program
    .command('logout')
    .description('forget the stored API key')
    .action(
      action((ctx) => {
        const removed = removeConfig(ctx.env);
        ctx.out.result({ config_path: configPath(ctx.env), removed }, () =>
          ctx.out.note(removed ? `Removed ${configPath(ctx.env)}.` : 'Not logged in.'),
        );
      }),
    );
}

function normalizeUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`not an http(s) URL: ${value}`);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** A prompt whose answer is not echoed. */
function promptHidden(ctx: Context, question: string): Promise<string> {
  const stderr = ctx.streams.stderr;
  stderr.write(question);
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: ctx.streams.stdin, output: muted, terminal: true });
  return new Promise((resolve, reject) => {
    rl.question('', (answer) => {
      rl.close();
      stderr.write('\n');
      resolve(answer);
    });
    rl.on('SIGINT', () => {
      rl.close();
      reject(new UsageError('login cancelled'));
    });
  });
}
