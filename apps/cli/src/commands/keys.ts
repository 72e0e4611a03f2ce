import type { Command } from 'commander';
import type { ApiKey } from '@sdx/sdk';
import { action, oneOf } from '../args';

const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description("the workspace's API keys");

  keys
    .command('create')
    .description('create a key; its secret is printed once')
    .requiredOption('-n, --name <name>', 'what the key is for')
    .option('--role <role>', 'viewer, member (default), admin or owner', oneOf(ROLES))
    .option('--expires-at <time>', 'ISO 8601 expiry')
    .action(
      action(async (ctx, options: { name: string; role?: (typeof ROLES)[number]; expiresAt?: string }) => {
        const key = await ctx.client().keys.create({
          name: options.name,
          ...(options.role ? { role: options.role } : {}),
          ...(options.expiresAt ? { expires_at: options.expiresAt } : {}),
        });
        ctx.out.result(key, () => {
          ctx.out.record([
            ['id', key.id],
            ['name', key.name],
            ['role', key.role],
            ['expires', key.expires_at],
            ['api key', ctx.out.colors.bold(key.api_key)],
          ]);
          ctx.out.note(ctx.out.errColors.yellow('The API key is shown this once: store it now.'));
        }, [key.api_key]);
      }),
    );

  keys
    .command('list')
    .description('keys, newest first, revoked ones included (never a secret)')
    .action(
      action(async (ctx) => {
        const rows = (await ctx.client().keys.list()).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table<ApiKey>(rows, [
              { header: 'ID', value: (k) => k.id },
              { header: 'NAME', value: (k) => k.name ?? '-' },
              { header: 'PREFIX', value: (k) => k.prefix },
              { header: 'ROLE', value: (k) => k.role },
              { header: 'LAST USED', value: (k) => k.last_used_at ?? '-' },
              {
                header: 'STATE',
                value: (k) => (k.revoked_at ? 'revoked' : k.expires_at && Date.parse(k.expires_at) < Date.now() ? 'expired' : 'active'),
                color: (t, c) => (t === 'active' ? c.green(t) : c.red(t)),
              },
            ]),
          rows.map((k) => k.id),
        );
      }),
    );

  keys
    .command('revoke')
    .argument('<key_id>')
    .description('revoke a key: it fails from its next request on')
    .action(
      action(async (ctx, id: string) => {
        await ctx.client().keys.revoke(id);
        ctx.out.result({ id, revoked: true }, () => ctx.out.note(`revoked ${id}`), [id]);
      }),
    );
}
