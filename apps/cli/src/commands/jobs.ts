import type { Command } from 'commander';
import type { Client, ExportFormat, Job, JobStatus } from '@sdx/sdk';
import { action, integer, oneOf } from '../args';
import type { Context } from '../context';
import { CliError, EXIT, UsageError } from '../exit-codes';
import { number, type Output } from '../output';
import { jobProgress, withProgress } from '../progress';
import { LIMIT_HELP, noteDefaultLimit } from './catalog';

const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
const FORMATS = ['json', 'csv', 'xlsx', 'ndjson'] as const;

interface JobOptions {
  limit?: number;
  includePosts?: number;
  cache: boolean;
  idempotencyKey?: string;
  wait?: boolean;
}

export function registerJobs(program: Command): void {
  program
    .command('extract')
    .description('run one extraction and print the completed job (waits with a progress bar when it takes long)')
    .argument('<platform>', 'platform (sdx platforms lists them)')
    .argument('<operation>', 'operation of the platform')
    .argument('<target>', 'username, URL, query... as the operation expects')
    .option('-l, --limit <n>', LIMIT_HELP, integer())
    .option('--include-posts <n>', 'posts bundled with a profile', integer(0))
    .option('--no-cache', 'skip the result cache')
    .option('--idempotency-key <key>', 'your own Idempotency-Key (default: a fresh one, reused on retries)')
    .action(
      action(async (ctx, platform: string, operation: string, target: string, options: JobOptions) => {
        const sdx = ctx.client();
        const body = request(platform, operation, target, options);
        await noteDefaultLimit(ctx, platform, operation, options.limit);
        const job = await withProgress(
          ctx,
          jobProgress(ctx.out),
          (signal, onProgress) =>
            sdx.jobs.extract(body, { idempotencyKey: options.idempotencyKey, noCache: !options.cache, signal, onProgress }),
          (last) => interrupted(ctx, last),
        );
        printJob(ctx.out, job);
      }),
    );

  const jobs = program.command('jobs').description('durable jobs: create, get, list, cancel, wait');

  jobs
    .command('create')
    .description('create a job; with --wait, follow it with a progress bar and print it when it ends')
    .argument('<platform>', 'platform (sdx platforms lists them)')
    .argument('<operation>', 'operation of the platform')
    .argument('<target>', 'username, URL, query... as the operation expects')
    .option('-l, --limit <n>', LIMIT_HELP, integer())
    .option('--include-posts <n>', 'posts bundled with a profile', integer(0))
    .option('--no-cache', 'skip the result cache')
    .option('--idempotency-key <key>', 'your own Idempotency-Key (default: a fresh one, reused on retries)')
    .option('-w, --wait', 'wait until the job ends')
    .action(
      action(async (ctx, platform: string, operation: string, target: string, options: JobOptions) => {
        const sdx = ctx.client();
        await noteDefaultLimit(ctx, platform, operation, options.limit);
        const job = await sdx.jobs.create(request(platform, operation, target, options), {
          idempotencyKey: options.idempotencyKey,
          noCache: !options.cache,
        });
        if (!options.wait) {
          printJob(ctx.out, job);
          return;
        }
        await waitAndPrint(ctx, sdx, job, true);
      }),
    );

  jobs
    .command('get')
    .description('show a job')
    .argument('<job_id>')
    .action(
      action(async (ctx, id: string) => {
        printJob(ctx.out, await ctx.client().jobs.get(id));
      }),
    );

  jobs
    .command('list')
    .description('list jobs, newest first')
    .option('-l, --limit <n>', 'jobs per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .option('--status <status>', 'only jobs in this status', oneOf(JOB_STATUSES))
    .option('--platform <platform>', 'only jobs of this platform')
    .option('--operation <operation>', 'only jobs of this operation')
    .option('--batch <batch_id>', 'only the children of this batch')
    .option('--schedule <schedule_id>', 'only the jobs of this schedule')
    .action(
      action(
        async (
          ctx,
          options: {
            limit?: number;
            all?: boolean;
            status?: JobStatus;
            platform?: string;
            operation?: string;
            batch?: string;
            schedule?: string;
          },
        ) => {
          // A list shows no results (`sdx jobs get` or `sdx export` reads one): none are read.
          const list = ctx.client().jobs.list({
            include_result: false,
            limit: options.limit,
            status: options.status,
            platform: options.platform,
            operation: options.operation,
            batch_id: options.batch,
            schedule_id: options.schedule,
          });
          const rows = options.all ? await list.toArray() : (await list).data;
          ctx.out.result(
            rows,
            () => jobTable(ctx.out, rows),
            rows.map((j) => j.id),
          );
        },
      ),
    );

  jobs
    .command('cancel')
    .description('cancel a job (a running job stops cooperatively)')
    .argument('<job_id>')
    .action(
      action(async (ctx, id: string) => {
        printJob(ctx.out, await ctx.client().jobs.cancel(id));
      }),
    );

  jobs
    .command('wait')
    .description('follow a job with a progress bar until it ends, then print it')
    .argument('<job_id>')
    .action(
      action(async (ctx, id: string) => {
        const sdx = ctx.client();
        await waitAndPrint(ctx, sdx, await sdx.jobs.get(id));
      }),
    );

  program
    .command('export')
    .description('download the result of a job or a batch')
    .argument('<id>', 'a job_... or bat_... ID')
    .option('-f, --format <format>', 'json, csv, xlsx or ndjson', oneOf(FORMATS), 'json')
    .option('-o, --output <file>', 'write to this file (default: stdout)')
    .action(
      action(async (ctx, id: string, options: { format: ExportFormat; output?: string }) => {
        const sdx = ctx.client();
        if (!options.output) {
          if (options.format === 'xlsx' && ctx.out.stdoutIsTerminal)
            throw new UsageError('xlsx is binary: write it to a file with -o FILE');
          if (ctx.out.json) throw new UsageError('--json prints a summary of the download: give -o FILE');
          await sdx.exports.download(id, ctx.out.stdout, { format: options.format });
          return;
        }
        const saved = await sdx.exports.download(id, options.output, { format: options.format });
        const summary = { id, format: options.format, file: options.output, bytes: saved.bytes, content_type: saved.contentType };
        ctx.out.result(summary, () => ctx.out.note(`wrote ${number(saved.bytes)} bytes to ${options.output}`), [options.output]);
      }),
    );
}

function request(platform: string, operation: string, target: string, options: JobOptions) {
  return {
    platform,
    operation: operation as never,
    target,
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.includePosts !== undefined ? { include_posts: options.includePosts } : {}),
  };
}

async function waitAndPrint(ctx: Context, sdx: Client, job: Job, announce = false): Promise<void> {
  const bar = jobProgress(ctx.out);
  const done = await withProgress(
    ctx,
    bar,
    (signal, onProgress) => {
      // Printed once Ctrl-C is handled: whoever sees the job's ID may interrupt.
      if (announce && ctx.out.stderrIsTerminal && !ctx.out.json && !ctx.out.quiet) ctx.out.note(`${job.id} ${job.status}`);
      bar.update(job);
      return sdx.jobs.wait(job.id, { signal, onProgress });
    },
    (last) => interrupted(ctx, last ?? job),
  );
  printJob(ctx.out, done);
  if (done.status !== 'completed') throw new CliError(`job ${done.id} ended ${done.status}`, EXIT.jobFailed);
}

/** Ctrl-C while waiting: the job is not cancelled, and the message says so. */
function interrupted(ctx: Context, job: Job | undefined): void {
  if (ctx.out.json && job) ctx.out.data(job);
  const id = job?.id ?? 'the job';
  ctx.out.note(
    `\nStopped waiting. ${id} was not cancelled: it keeps running on the service${job ? ` (${job.status})` : ''}.\n` +
      `Follow it again with \`sdx jobs wait ${id}\`, or cancel it with \`sdx jobs cancel ${id}\`.`,
  );
}

export function printJob(out: Output, job: Job): void {
  out.result(job, () => {
    out.record([
      ['id', job.id],
      ['status', out.status(job.status)],
      ['platform', job.platform],
      ['operation', job.operation],
      ['target', job.target],
      ['limit', job.requested_limit],
      ['progress', `${number(job.progress_current)}${job.progress_total !== null ? ` / ${number(job.progress_total)}` : ''}`],
      ['results', job.result_count],
      ['reserved credits', job.reserved_credits],
      ['billed credits', job.billed_credits],
      ['created', job.created_at],
      ['finished', job.finished_at],
      ...(job.error ? ([['error', `${job.error.code}: ${job.error.message}`]] as Array<[string, unknown]>) : []),
      ...(job.cached ? ([['cached', 'yes']] as Array<[string, unknown]>) : []),
      ...(job.deduplicated ? ([['deduplicated', 'yes']] as Array<[string, unknown]>) : []),
    ]);
    if (job.status === 'completed') out.note(out.errColors.dim(`export it: sdx export ${job.id} --format csv -o ${job.id}.csv`));
  }, [job.id]);
}

export function jobTable(out: Output, rows: Job[]): void {
  out.table(rows, [
    { header: 'ID', value: (j) => j.id },
    { header: 'STATUS', value: (j) => j.status, color: (text) => out.status(text) },
    { header: 'PLATFORM', value: (j) => j.platform },
    { header: 'OPERATION', value: (j) => j.operation },
    { header: 'TARGET', value: (j) => truncate(j.target, 32) },
    { header: 'RESULTS', value: (j) => number(j.result_count), align: 'right' },
    { header: 'CREDITS', value: (j) => number(j.billed_credits), align: 'right' },
    { header: 'CREATED', value: (j) => j.created_at.replace(/\.\d+/, '') },
  ]);
}

function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}
