import { type ControlledTransaction, sql } from 'kysely';
import type { Database, Db, Executor, ScheduleRow, ScheduleRunRow, ScheduleRunStatus } from '@sdx/db';
import { createBatch } from '../batches/create-batch';
import type { Services, Tenant } from '../context';
import { ApiError, RequestValidationError } from '../errors';
import { createJob } from '../jobs/create-job';
import { findWorkspace } from '../workspaces/workspaces';
import { inTransaction } from '../tx';
import { recordEvents, runCandidates } from '../webhooks/events';

/**
 * Idempotency scope of schedule dispatches. Each run uses its own ID as the key, so dispatching
 * the same run again (recovery after a crash) returns the job or batch the first attempt made
 * instead of creating a second one.
 */
export const SCHEDULE_RUN_ENDPOINT = 'schedule-run';

/** How many of a schedule's latest dispatched runs the overlap check looks at. */
const OVERLAP_LOOKBACK_RUNS = 10;

/** What dispatching one run came to. */
export interface ScheduleRunOutcome {
  status: ScheduleRunStatus;
  jobId: string | null;
  batchId: string | null;
  error: Record<string, unknown> | null;
}

/** The tenant a schedule's work is created for: its workspace, acting without a key. */
export async function scheduleTenant(db: Executor, workspaceId: string): Promise<Tenant> {
  const workspace = await findWorkspace(db, workspaceId);
  if (!workspace) throw new Error(`workspace ${workspaceId} of a schedule does not exist`);
  return { workspace, keyId: null, role: null };
}

/**
 * Of the given schedules, those whose previous occurrences' work (the job, or any child of the
 * batch, of their latest dispatched runs) is still queued or running: overlap_policy skip
 * records the next occurrence as skipped_overlap instead of dispatching it. One query.
 */
export async function schedulesWithActiveWork(db: Executor, scheduleIds: string[]): Promise<Set<string>> {
  if (scheduleIds.length === 0) return new Set();
  const { rows } = await sql<{ schedule_id: string }>`
    with recent as (
      select schedule_id, job_id, batch_id from (
        select schedule_id, job_id, batch_id,
               row_number() over (partition by schedule_id order by created_at desc, id desc) as rn
        from schedule_runs
        where schedule_id = any(${scheduleIds}::text[]) and (job_id is not null or batch_id is not null)
      ) ranked
      where rn <= ${OVERLAP_LOOKBACK_RUNS}
    )
    select r.schedule_id from recent r join jobs j on j.id = r.job_id where j.status in ('queued', 'running')
    union
    select r.schedule_id from recent r join jobs j on j.batch_id = r.batch_id where j.status in ('queued', 'running')
  `.execute(db);
  return new Set(rows.map((r) => r.schedule_id));
}

export interface DispatchRunOptions {
  /** The schedule's tenant when the caller already has it. */
  tenant?: Tenant;
  /**
   * Re-dispatch of a run a crashed process left undispatched: first look for the work an
   * earlier attempt may have created (its idempotency record) and record that.
   */
  recovering?: boolean;
}

/** Which runs a hold asks for: given ones, or the oldest undispatched ones created before a time. */
export type RunSelection = { ids: readonly string[] } | { createdBefore: Date; limit: number };

/**
 * A dispatcher's hold on runs: those still undispatched (queued, no job, no batch, no
 * dispatched_at) among the ones asked for, locked FOR UPDATE SKIP LOCKED in a transaction that
 * stays open while they are dispatched and commits with their outcomes. The row lock is the
 * dispatch's lease: no one else dispatches a held run, and Postgres lets go of it the moment
 * the holding process dies or loses its connection, so another scheduler's recovery takes the
 * run at once, with no delay to wait out and no clock to agree on. A run another dispatcher
 * holds, or one already dispatched, is left out.
 */
export interface RunHold {
  /** The runs held, as locked. */
  readonly runs: ScheduleRunRow[];
  /** Records outcomes of held runs (recordRunOutcomes) and ends the hold; the runs as stored. */
  settle(entries: Array<{ run: ScheduleRunRow; outcome: ScheduleRunOutcome }>, now: Date): Promise<ScheduleRunRow[]>;
  /** Ends the hold without recording anything. */
  release(): Promise<void>;
}

export async function holdRuns(db: Db, which: RunSelection): Promise<RunHold> {
  if ('ids' in which && which.ids.length === 0) return { runs: [], settle: async () => [], release: async () => undefined };
  const tx: ControlledTransaction<Database> = await db.startTransaction().execute();
  let runs: ScheduleRunRow[];
  try {
    let query = tx
      .selectFrom('schedule_runs')
      .selectAll()
      .where('status', '=', 'queued')
      .where('job_id', 'is', null)
      .where('batch_id', 'is', null)
      .where('dispatched_at', 'is', null);
    query = 'ids' in which ? query.where('id', 'in', [...which.ids]) : query.where('created_at', '<=', which.createdBefore).orderBy('created_at').limit(which.limit);
    runs = await query.forUpdate().skipLocked().execute();
  } catch (error) {
    await tx.rollback().execute().catch(() => undefined);
    throw error;
  }
  const release = async () => {
    if (!tx.isCommitted && !tx.isRolledBack) await tx.rollback().execute();
  };
  return {
    runs,
    async settle(entries, now) {
      try {
        const recorded = await recordRunOutcomes(tx, entries, now);
        await tx.commit().execute();
        return recorded;
      } catch (error) {
        await release().catch(() => undefined);
        throw error;
      }
    },
    release,
  };
}

/**
 * Dispatches one run exactly as POST /v1/jobs (one target) or POST /v1/batches (several) would:
 * the same checks, active-job cap and credit reservation, with the run ID as idempotency key.
 * Records the outcome on the run: queued with job_id or batch_id; skipped_credits on 402 (a
 * batch is all or nothing, so nothing was created); failed with the service error otherwise.
 * The run is held while it is dispatched (holdRuns); one another dispatcher holds, or that is
 * no longer undispatched, is returned as stored, untouched. An unexpected error (database
 * unreachable) is thrown and leaves the run for recovery.
 */
export async function dispatchScheduleRun(
  services: Services,
  schedule: ScheduleRow,
  run: ScheduleRunRow,
  options: DispatchRunOptions = {},
): Promise<ScheduleRunRow> {
  const hold = await holdRuns(services.db, { ids: [run.id] });
  const held = hold.runs[0];
  if (!held) return services.db.selectFrom('schedule_runs').selectAll().where('id', '=', run.id).executeTakeFirstOrThrow();
  let outcome: ScheduleRunOutcome;
  try {
    outcome = await attemptScheduleRun(services, schedule, held, options);
  } catch (error) {
    await hold.release().catch(() => undefined);
    throw error;
  }
  const [recorded] = await hold.settle([{ run: held, outcome }], services.clock.now());
  return recorded!;
}

/** The dispatch of dispatchScheduleRun without recording it: the scheduler records a whole round in one statement. */
export async function attemptScheduleRun(
  services: Services,
  schedule: ScheduleRow,
  run: ScheduleRunRow,
  options: DispatchRunOptions = {},
): Promise<ScheduleRunOutcome> {
  const tenant = options.tenant ?? (await scheduleTenant(services.db, schedule.workspace_id));
  const earlier = options.recovering ? await workCreatedFor(services.db, tenant, run) : null;
  return earlier ?? (await attempt(services, tenant, schedule, run));
}

async function attempt(services: Services, tenant: Tenant, schedule: ScheduleRow, run: ScheduleRunRow): Promise<ScheduleRunOutcome> {
  const recipe = {
    platform: schedule.platform,
    operation: schedule.operation,
    limit: schedule.requested_limit,
    include_posts: schedule.include_posts,
  };
  const options = { endpoint: SCHEDULE_RUN_ENDPOINT, idempotencyKey: run.id, scheduleId: schedule.id, newOnly: schedule.delivery === 'new_only', requestId: run.id };
  try {
    if (schedule.targets.length === 1) {
      const created = await createJob(services, tenant, { ...recipe, target: schedule.targets[0]! }, options);
      return { status: 'queued', jobId: created.job.id, batchId: null, error: null };
    }
    const created = await createBatch(services, tenant, { ...recipe, targets: schedule.targets }, options);
    return { status: 'queued', jobId: null, batchId: created.batch.id, error: null };
  } catch (error) {
    if (error instanceof ApiError) {
      return {
        status: error.code === 'insufficient_credits' ? 'skipped_credits' : 'failed',
        jobId: null,
        batchId: null,
        error: { error: error.code, message: error.message, ...error.fields },
      };
    }
    if (error instanceof RequestValidationError) {
      return { status: 'failed', jobId: null, batchId: null, error: { error: 'invalid_request', message: error.message, detail: error.issues } };
    }
    throw error;
  }
}

/** The job or batch an earlier dispatch of this run created, found by its idempotency record. */
async function workCreatedFor(db: Executor, tenant: Tenant, run: ScheduleRunRow): Promise<ScheduleRunOutcome | null> {
  const record = await db
    .selectFrom('idempotency_keys')
    .select(['resource_type', 'resource_id'])
    .where('workspace_id', '=', tenant.workspace.id)
    .where('endpoint', '=', SCHEDULE_RUN_ENDPOINT)
    .where('key', '=', run.id)
    .executeTakeFirst();
  if (!record) return null;
  return record.resource_type === 'batch'
    ? { status: 'queued', jobId: null, batchId: record.resource_id, error: null }
    : { status: 'queued', jobId: record.resource_id, batchId: null, error: null };
}

/**
 * Writes outcomes, each once, in one statement. Created work always wins: at most one job or
 * batch exists per run (the idempotency key), and if a slow first attempt and a recovery both
 * finish, the run ends up pointing at that work whatever order they record in. A skip or
 * failure is only written over a run that has not been settled yet. The webhook events of the
 * runs recorded now (schedule.run.dispatched, schedule.run.skipped) are written with them.
 * Returns the runs as stored, in the order given.
 */
export async function recordRunOutcomes(
  db: Executor,
  entries: Array<{ run: ScheduleRunRow; outcome: ScheduleRunOutcome }>,
  now: Date,
): Promise<ScheduleRunRow[]> {
  if (entries.length === 0) return [];
  const values = entries.map(
    ({ run, outcome }) =>
      sql`(${run.id}::text, ${outcome.status}::text, ${outcome.jobId}::text, ${outcome.batchId}::text, ${
        outcome.error === null ? null : JSON.stringify(outcome.error)
      }::jsonb, ${outcome.status === 'queued' ? now : null}::timestamptz)`,
  );
  // The runs and the webhook events of those dispatched or skipped now commit together.
  const rows = await inTransaction(db, async (tx) => {
    const { rows: updated } = await sql<ScheduleRunRow>`
      update schedule_runs r
      set status = v.status, job_id = v.job_id, batch_id = v.batch_id, error = v.error, dispatched_at = v.dispatched_at
      from (values ${sql.join(values)}) as v(id, status, job_id, batch_id, error, dispatched_at)
      where r.id = v.id and r.job_id is null and r.batch_id is null and (v.status = 'queued' or r.status = 'queued')
      returning r.*
    `.execute(tx);
    await recordEvents(tx, now, runCandidates(updated));
    return updated;
  });
  const stored = new Map(rows.map((row) => [row.id, row]));
  const missing = entries.map((e) => e.run.id).filter((id) => !stored.has(id));
  if (missing.length > 0) {
    for (const row of await db.selectFrom('schedule_runs').selectAll().where('id', 'in', missing).execute()) stored.set(row.id, row);
  }
  return entries.map((e) => stored.get(e.run.id)!);
}
