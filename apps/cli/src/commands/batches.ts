import type { Command } from 'commander';
import type { Batch, Client } from '@sdx/sdk';
import { action, integer } from '../args';
import { type Context, readTargets } from '../context';
import { CliError, EXIT } from '../exit-codes';
import { number, type Output } from '../output';
import { batchProgress, withProgress } from '../progress';
import { LIMIT_HELP, noteDefaultLimit } from './catalog';

export function registerBatches(program: Command): void {
  const batches = program.command('batches').description('one operation over up to 100 targets');

  batches
    .command('create')
    .description('create a batch from a file of targets (one per line, or a JSON array; - reads stdin)')
    .argument('<platform>')
    .argument('<operation>')
    .requiredOption('-t, --targets-file <file>', 'the targets')
    .option('-l, --limit <n>', LIMIT_HELP, integer())
    .option('--include-posts <n>', 'posts bundled with each profile', integer(0))
    .option('--idempotency-key <key>', 'your own Idempotency-Key (default: a fresh one, reused on retries)')
    .option('-w, --wait', 'wait until every child ends')
    .action(
      action(
        async (
          ctx,
          platform: string,
          operation: string,
          options: { targetsFile: string; limit?: number; includePosts?: number; idempotencyKey?: string; wait?: boolean },
        ) => {
          const sdx = ctx.client();
          const targets = readTargets(options.targetsFile);
          await noteDefaultLimit(ctx, platform, operation, options.limit);
          const batch = await sdx.batches.create(
            {
              platform,
              operation: operation as never,
              targets,
              ...(options.limit !== undefined ? { limit: options.limit } : {}),
              ...(options.includePosts !== undefined ? { include_posts: options.includePosts } : {}),
            },
            { idempotencyKey: options.idempotencyKey },
          );
          if (!options.wait) {
            printBatch(ctx.out, batch);
            return;
          }
          await waitAndPrint(ctx, sdx, batch.id, batch);
        },
      ),
    );

  batches
    .command('get')
    .argument('<batch_id>')
    .description('show a batch and its children')
    .action(action(async (ctx, id: string) => printBatch(ctx.out, await ctx.client().batches.get(id))));

  batches
    .command('list')
    .description('list batches, newest first')
    .option('-l, --limit <n>', 'batches per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .action(
      action(async (ctx, options: { limit?: number; all?: boolean }) => {
        const list = ctx.client().batches.list({ limit: options.limit });
        const rows = options.all ? await list.toArray() : (await list).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table(rows, [
              { header: 'ID', value: (b) => b.id },
              { header: 'STATUS', value: (b) => b.status, color: (t) => ctx.out.status(t) },
              { header: 'PLATFORM', value: (b) => b.platform },
              { header: 'OPERATION', value: (b) => b.operation },
              { header: 'TARGETS', value: (b) => number(b.target_count), align: 'right' },
              { header: 'DONE', value: (b) => number(b.completed_count), align: 'right' },
              { header: 'FAILED', value: (b) => number(b.failed_count), align: 'right' },
              { header: 'CREDITS', value: (b) => number(b.billed_credits), align: 'right' },
              { header: 'CREATED', value: (b) => b.created_at.replace(/\.\d+/, '') },
            ]),
          rows.map((b) => b.id),
        );
      }),
    );

  batches
    .command('cancel')
    .argument('<batch_id>')
    .description('cancel every child still queued or running')
    .action(action(async (ctx, id: string) => printBatch(ctx.out, await ctx.client().batches.cancel(id))));

  batches
    .command('wait')
    .argument('<batch_id>')
    .description('follow a batch until every child ends')
    .action(action(async (ctx, id: string) => waitAndPrint(ctx, ctx.client(), id)));
}

async function waitAndPrint(ctx: Context, sdx: Client, id: string, first?: Batch): Promise<void> {
  const bar = batchProgress(ctx.out);
  const done = await withProgress(
    ctx,
    bar,
    (signal, onProgress) => {
      if (first) bar.update(first);
      return sdx.batches.wait(id, { signal, onProgress });
    },
    (last) => {
      if (ctx.out.json && (last ?? first)) ctx.out.data(last ?? first);
      ctx.out.note(
        `\nStopped waiting. ${id} was not cancelled: its jobs keep running on the service.\nFollow it again with \`sdx batches wait ${id}\`, or cancel it with \`sdx batches cancel ${id}\`.`,
      );
    },
  );
  printBatch(ctx.out, done);
  if (done.status !== 'completed') throw new CliError(`batch ${done.id} ended ${done.status}`, EXIT.jobFailed);
}

function printBatch(out: Output, batch: Batch): void {
  out.result(batch, () => {
    out.record([
      ['id', batch.id],
      ['status', out.status(batch.status)],
      ['platform', batch.platform],
      ['operation', batch.operation],
      ['limit', batch.requested_limit],
      ['targets', batch.target_count],
      ['queued / running', `${number(batch.queued_count)} / ${number(batch.running_count)}`],
      [
        'completed / failed / cancelled',
        `${number(batch.completed_count)} / ${number(batch.failed_count)} / ${number(batch.cancelled_count)}`,
      ],
      ['results', batch.result_count],
      ['reserved credits', batch.reserved_credits],
      ['billed credits', batch.billed_credits],
      ['created', batch.created_at],
    ]);
    if (batch.jobs && batch.jobs.length > 0) {
      out.line();
      out.table(batch.jobs, [
        { header: 'JOB', value: (j) => j.id },
        { header: 'TARGET', value: (j) => j.target },
        { header: 'STATUS', value: (j) => j.status, color: (t) => out.status(t) },
      ]);
    }
  }, [batch.id]);
}
