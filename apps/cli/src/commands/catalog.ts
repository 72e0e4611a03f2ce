import type { Command } from 'commander';
import type { OperationCapability, Platform } from '@sdx/sdk';
import { action, integer } from '../args';
import { type Context, readTargets } from '../context';
import { UsageError } from '../exit-codes';
import { number } from '../output';

export function registerCatalog(program: Command): void {
  program
    .command('platforms')
    .description('platforms and operations the service runs, with their default and maximum --limit and prices (no key needed)')
    .action(
      action(async (ctx) => {
        const platforms = (await ctx.anonymousClient().platforms.list()).data;
        const rows = platforms.flatMap((p: Platform) => p.operations.map((o: OperationCapability) => ({ platform: p.platform, ...o })));
        ctx.out.result(platforms, () =>
          ctx.out.table(rows, [
            { header: 'PLATFORM', value: (r) => r.platform },
            { header: 'OPERATION', value: (r) => r.operation },
            { header: 'DEFAULT', value: (r) => number(r.default_limit), align: 'right' },
            { header: 'MAX', value: (r) => number(r.max_results), align: 'right' },
            {
              header: 'PRICE',
              value: (r) =>
                r.base_credits > 0
                  ? `${r.base_credits} flat`
                  : `${r.credits_per_result} / ${r.results_per_credit === 1 ? 'result' : `${r.results_per_credit} results`}`,
            },
          ]),
        );
      }),
    );

  program
    .command('account')
    .description('the workspace of the key, its limits, and the key')
    .action(
      action(async (ctx) => {
        const account = await ctx.client().account.get();
        ctx.out.result(account, () =>
          ctx.out.record([
            ['workspace', `${account.organization_name} (${account.organization_id})`],
            ['key', account.authenticated_key_id],
            ['role', account.role],
            ['monthly quota', account.monthly_quota],
            ['rate limit / min', account.rate_limit_per_minute],
            ['max result limit', account.max_result_limit],
            ['max active jobs', account.max_active_jobs],
          ]),
        );
      }),
    );

  program
    .command('usage')
    .description('credits of the current period; --daily: one row per day')
    .option('-d, --daily', 'per UTC day, oldest first')
    .option('--days <n>', 'days of --daily (1 to 90, default 30)', integer())
    .action(
      action(async (ctx, options: { daily?: boolean; days?: number }) => {
        const sdx = ctx.client();
        if (options.daily) {
          const days = await sdx.usage.daily(options.days !== undefined ? { days: options.days } : {});
          ctx.out.result(days, () =>
            ctx.out.table(days, [
              { header: 'DATE', value: (d) => d.date },
              { header: 'CREDITS USED', value: (d) => number(d.credits_used), align: 'right' },
              { header: 'RELEASED', value: (d) => number(d.credits_released), align: 'right' },
              { header: 'RESULTS', value: (d) => number(d.results), align: 'right' },
              { header: 'COMPLETED', value: (d) => number(d.jobs_completed), align: 'right' },
              { header: 'FAILED', value: (d) => number(d.jobs_failed), align: 'right' },
            ]),
          );
          return;
        }
        const usage = await sdx.usage.current();
        ctx.out.result(usage, () =>
          ctx.out.record([
            ['period start', usage.period_start],
            ['credit limit', usage.credit_limit],
            ['used', usage.credits_used],
            ['reserved', usage.credits_reserved],
            ['remaining', usage.credits_remaining],
            ['purchased', usage.purchased_credits],
            ['promotional', usage.promotional_credits],
            ['promotional expires', usage.promotional_expires_at],
          ]),
        );
      }),
    );

  program
    .command('quote')
    .description('what a job (one target) or batch (several) would reserve now; nothing is reserved')
    .argument('<platform>')
    .argument('<operation>')
    .argument('[targets...]', 'one target for a job, several for a batch')
    .option('-t, --targets-file <file>', 'targets, one per line or a JSON array')
    .option('-l, --limit <n>', LIMIT_HELP, integer())
    .option('--include-posts <n>', 'posts bundled with each profile', integer(0))
    .action(
      action(
        async (
          ctx,
          platform: string,
          operation: string,
          given: string[],
          options: { targetsFile?: string; limit?: number; includePosts?: number },
        ) => {
          const targets = [...given, ...(options.targetsFile ? readTargets(options.targetsFile) : [])];
          if (targets.length === 0) throw new UsageError('give a target, or several, or --targets-file');
          await noteDefaultLimit(ctx, platform, operation, options.limit);
          const quote = await ctx.client().quotes.create({
            platform,
            operation: operation as never,
            ...(targets.length === 1 ? { target: targets[0] } : { targets }),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.includePosts !== undefined ? { include_posts: options.includePosts } : {}),
          });
          ctx.out.result(quote, () =>
            ctx.out.record([
              ['platform / operation', `${quote.platform} / ${quote.operation}`],
              ['limit per target', quote.requested_limit],
              ['targets', quote.target_count],
              ['cached targets', quote.cached_targets],
              ['max credits', quote.max_credits],
              ['available credits', quote.available_credits],
              ['affordable', quote.affordable ? ctx.out.colors.green('yes') : ctx.out.colors.red('no')],
              ['active jobs', `${number(quote.active_jobs)} of ${number(quote.max_active_jobs)}`],
            ]),
          );
        },
      ),
    );
}

/** The help of --limit wherever a command runs an operation: the default and the maximum are the operation's, from GET /v1/platforms. */
export const LIMIT_HELP =
  "results wanted per target (default: the operation's own default; at most its maximum; `sdx platforms` lists both)";

/**
 * When --limit is left out, says on stderr which default the service applies and the maximum,
 * from GET /v1/platforms (the SDK's `platforms.limits`). Nothing with --json or --quiet, or when
 * the catalog has no such operation (the request itself is then refused with the reason).
 */
export async function noteDefaultLimit(ctx: Context, platform: string, operation: string, limit: number | undefined): Promise<void> {
  if (limit !== undefined || ctx.out.json || ctx.out.quiet) return;
  const limits = await ctx
    .anonymousClient()
    .platforms.limits(platform, operation)
    .catch(() => null);
  if (!limits) return;
  ctx.out.note(
    ctx.out.errColors.dim(
      `no --limit: ${platform} ${operation} takes its default of ${number(limits.defaultLimit)} results per target (at most ${number(limits.maxResults)}, with --limit N)`,
    ),
  );
}
