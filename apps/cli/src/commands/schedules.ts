import type { Command } from 'commander';
import type { Schedule, ScheduleRequest } from '@sdx/sdk';
import { action, collect, integer, oneOf } from '../args';
import { readTargets } from '../context';
import { UsageError } from '../exit-codes';
import { number, type Output } from '../output';
import { LIMIT_HELP, noteDefaultLimit } from './catalog';

const FREQUENCIES = ['once', 'daily', 'weekly', 'monthly'] as const;

interface RecurrenceOptions {
  frequency: (typeof FREQUENCIES)[number];
  timezone: string;
  startsAt: string;
}

export function registerSchedules(program: Command): void {
  const schedules = program.command('schedules').description('recipes dispatched on a recurrence');

  schedules
    .command('create')
    .description('store a job (one target) or batch (several) recipe with its recurrence')
    .argument('<platform>')
    .argument('<operation>')
    .requiredOption('-n, --name <name>', 'a name for it')
    .option('-t, --target <target>', 'a target (repeat for several)', collect)
    .option('--targets-file <file>', 'targets, one per line or a JSON array')
    .requiredOption('--frequency <frequency>', 'once, daily, weekly or monthly', oneOf(FREQUENCIES))
    .requiredOption('--timezone <zone>', 'IANA time zone of the wall-clock time, e.g. Europe/Paris')
    .requiredOption('--starts-at <time>', 'first occurrence, ISO 8601 with its UTC offset')
    .option('-l, --limit <n>', LIMIT_HELP, integer())
    .option('--include-posts <n>', 'posts bundled with each profile', integer(0))
    .option('--delivery <mode>', 'all, or new_only (only items no earlier run delivered)', oneOf(['all', 'new_only'] as const))
    .action(
      action(
        async (
          ctx,
          platform: string,
          operation: string,
          options: RecurrenceOptions & {
            name: string;
            target?: string[];
            targetsFile?: string;
            limit?: number;
            includePosts?: number;
            delivery?: 'all' | 'new_only';
          },
        ) => {
          const targets = [...(options.target ?? []), ...(options.targetsFile ? readTargets(options.targetsFile) : [])];
          if (targets.length === 0) throw new UsageError('give at least one --target or a --targets-file');
          const body: ScheduleRequest = {
            name: options.name,
            platform,
            operation: operation as ScheduleRequest['operation'],
            targets,
            frequency: options.frequency,
            timezone: options.timezone,
            starts_at: options.startsAt,
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.includePosts !== undefined ? { include_posts: options.includePosts } : {}),
            ...(options.delivery ? { delivery: options.delivery } : {}),
          };
          await noteDefaultLimit(ctx, platform, operation, options.limit);
          printSchedule(ctx.out, await ctx.client().schedules.create(body));
        },
      ),
    );

  schedules
    .command('list')
    .description('active and paused schedules')
    .option('-l, --limit <n>', 'schedules per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .action(
      action(async (ctx, options: { limit?: number; all?: boolean }) => {
        const list = ctx.client().schedules.list({ limit: options.limit });
        const rows = options.all ? await list.toArray() : (await list).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table(rows, [
              { header: 'ID', value: (s) => s.id },
              { header: 'NAME', value: (s) => s.name },
              { header: 'STATUS', value: (s) => s.status, color: (t) => ctx.out.status(t) },
              { header: 'PLATFORM', value: (s) => s.platform },
              { header: 'OPERATION', value: (s) => s.operation },
              { header: 'TARGETS', value: (s) => number(s.targets.length), align: 'right' },
              { header: 'FREQUENCY', value: (s) => s.frequency },
              { header: 'NEXT RUN (UTC)', value: (s) => s.next_run_at ?? '-' },
            ]),
          rows.map((s) => s.id),
        );
      }),
    );

  schedules
    .command('get')
    .argument('<schedule_id>')
    .description('show a schedule and its recent runs')
    .action(action(async (ctx, id: string) => printSchedule(ctx.out, await ctx.client().schedules.get(id))));

  for (const [verb, description] of [
    ['pause', 'stop automatic runs (history kept)'],
    ['resume', 'start automatic runs again'],
    ['run', 'dispatch one occurrence now'],
  ] as const) {
    schedules
      .command(verb)
      .argument('<schedule_id>')
      .description(description)
      .action(action(async (ctx, id: string) => printSchedule(ctx.out, await ctx.client().schedules[verb](id))));
  }

  schedules
    .command('delete')
    .argument('<schedule_id>')
    .description('delete a schedule (its past jobs stay)')
    .action(
      action(async (ctx, id: string) => {
        await ctx.client().schedules.delete(id);
        ctx.out.result({ id, deleted: true }, () => ctx.out.note(`deleted ${id}`), [id]);
      }),
    );

  schedules
    .command('preview')
    .description('the next occurrences of a recurrence, as the scheduler will dispatch them')
    .requiredOption('--frequency <frequency>', 'once, daily, weekly or monthly', oneOf(FREQUENCIES))
    .requiredOption('--timezone <zone>', 'IANA time zone')
    .requiredOption('--starts-at <time>', 'first occurrence, ISO 8601 with its UTC offset')
    .option('-c, --count <n>', 'how many (1 to 20, default 5)', integer())
    .action(
      action(async (ctx, options: RecurrenceOptions & { count?: number }) => {
        const preview = await ctx.client().schedules.preview({
          frequency: options.frequency,
          timezone: options.timezone,
          starts_at: options.startsAt,
          ...(options.count !== undefined ? { count: options.count } : {}),
        });
        ctx.out.result(preview, () =>
          ctx.out.table(preview.runs, [
            { header: 'UTC', value: (r) => r.at_utc },
            { header: 'LOCAL', value: (r) => r.at_local },
          ]),
        );
      }),
    );
}

function printSchedule(out: Output, schedule: Schedule): void {
  out.result(schedule, () => {
    out.record([
      ['id', schedule.id],
      ['name', schedule.name],
      ['status', out.status(schedule.status)],
      ['platform', schedule.platform],
      ['operation', schedule.operation],
      ['targets', schedule.targets.join(', ')],
      ['limit', schedule.requested_limit],
      ['frequency', `${schedule.frequency} (${schedule.timezone})`],
      ['starts at', schedule.starts_at],
      ['next run (UTC)', schedule.next_run_at],
      ['last run', schedule.last_run_at],
    ]);
    const runs = schedule.runs ?? [];
    if (runs.length > 0) {
      out.line();
      out.table(runs, [
        { header: 'RUN', value: (r) => r.id },
        { header: 'TRIGGER', value: (r) => r.trigger },
        { header: 'STATUS', value: (r) => r.status, color: (t) => out.status(t) },
        { header: 'FOR', value: (r) => r.scheduled_for },
        { header: 'WORK', value: (r) => r.job_id ?? r.batch_id ?? '-' },
      ]);
    }
  }, [schedule.id]);
}
