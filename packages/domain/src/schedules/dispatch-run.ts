import { sql } from 'kysely';
import type { Executor, ScheduleRow, ScheduleRunRow } from '@sdx/db';
import { createBatch } from '../batches/create-batch';
import type { Services, Tenant } from '../context';
import { ApiError, RequestValidationError } from '../errors';
import { createJob } from '../jobs/create-job';
import { findWorkspace } from '../workspaces/workspaces';
import { runTenant } from './creator';
import { holdRuns, type ScheduleRunOutcome } from './runs';

/**
 * Idempotency scope of schedule dispatches. Each run uses its own ID as the key, so dispatching
 * the same run again (recovery after a crash) returns the job or batch the first attempt made
 * instead of creating a second one.
 */
export const SCHEDULE_RUN_ENDPOINT = 'schedule-run';

/** How many of a schedule's latest dispatched runs the overlap check looks at. */
const OVERLAP_LOOKBACK_RUNS = 10;

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
  /**
   * The tenant the run is admitted as, when the caller has it: a manual run's caller. Absent, the
   * schedule's workspace acting as its creator's key (runTenant).
   */
  tenant?: Tenant;
  /**
   * Re-dispatch of a run a crashed process left undispatched: first look for the work an
   * earlier attempt may have created (its idempotency record) and record that.
   */
  recovering?: boolean;
}

/**
 * Dispatches one run exactly as POST /v1/jobs (one target) or POST /v1/batches (several) would:
 * the same checks, active-job cap and credit reservation, with the run ID as idempotency key.
 * Records the outcome on the run: queued with job_id or batch_id; skipped_credits on 402
 * insufficient_credits or spend_cap_reached (a batch is all or nothing, so nothing was
 * created); failed with the service error otherwise.
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
  return recorded;
}

/** The dispatch of dispatchScheduleRun without recording it: the scheduler records a whole round in one statement. */
export async function attemptScheduleRun(
  services: Services,
  schedule: ScheduleRow,
  run: ScheduleRunRow,
  options: DispatchRunOptions = {},
): Promise<ScheduleRunOutcome> {
  const tenant = options.tenant ?? runTenant(await scheduleTenant(services.db, schedule.workspace_id), schedule);
  const earlier = options.recovering ? await workCreatedFor(services.db, tenant, run) : null;
  return earlier ?? (await attempt(services, tenant, schedule, run));
}

async function attempt(services: Services, tenant: Tenant, schedule: ScheduleRow, run: ScheduleRunRow): Promise<ScheduleRunOutcome> {
  const recipe = {
    platform: schedule.platform,
    operation: schedule.operation,
    limit: schedule.requested_limit,
    include_posts: schedule.include_posts,
    ...(schedule.destination_id !== null ? { destination_id: schedule.destination_id } : {}),
  };
  const options = {
    endpoint: SCHEDULE_RUN_ENDPOINT,
    idempotencyKey: run.id,
    scheduleId: schedule.id,
    newOnly: schedule.delivery === 'new_only',
    requestId: run.id,
  };
  try {
    if (schedule.targets.length === 1) {
      const created = await createJob(services, tenant, { ...recipe, target: schedule.targets[0] }, options);
      return { status: 'queued', jobId: created.job.id, batchId: null, error: null };
    }
    const created = await createBatch(services, tenant, { ...recipe, targets: schedule.targets }, options);
    return { status: 'queued', jobId: null, batchId: created.batch.id, error: null };
  } catch (error) {
    if (error instanceof ApiError) {
      return {
        // A refused reservation skips the occurrence: too few credits, or a spend cap (the creating key's or the workspace's month).
        status: error.code === 'insufficient_credits' || error.code === 'spend_cap_reached' ? 'skipped_credits' : 'failed',
        jobId: null,
        batchId: null,
        error: { error: error.code, message: error.message, ...error.fields },
      };
    }
    if (error instanceof RequestValidationError) {
      return {
        status: 'failed',
        jobId: null,
        batchId: null,
        error: { error: 'invalid_request', message: error.message, detail: error.issues },
      };
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
