import { type ControlledTransaction, sql } from 'kysely';
import type { Database, Db, Executor, MonitorRow, MonitorRunRow, Tx } from '@sdx/db';
import { readAdmissionState } from '../admission/read-state';
import { planAdmission, type Submission } from '../admission/plan';
import { createBatch } from '../batches/create-batch';
import type { Services, Tenant } from '../context';
import { ApiError, RequestValidationError } from '../errors';
import { newId } from '../ids';
import { resolveRecipe } from '../jobs/recipe';
import { findWorkspace } from '../workspaces/workspaces';
import { MONITOR_BATCH_SIZE, nextMonitorRun } from './definition';
import { recordRunCompleted } from './changes';
import { recordRunObservations } from './observations';
import { lockMonitorOrThrow } from './queries';

/**
 * The runs of monitors (extensions-3.md section 3). A run is the monitor's operation over its
 * targets as batches of at most MONITOR_BATCH_SIZE targets, each admitted exactly as POST
 * /v1/batches admits one (billed as any batch, never served from the cache), with
 * `${run id}:${chunk}` as its idempotency key, so a run advanced again after a crash finds the
 * batch it made instead of making a second one.
 *
 * - All or nothing: when a run starts, the admission planner is asked, on the state admission
 *   would read, whether all of the run's batches together fit the credits and the spend caps
 *   (the creating key's month, then the workspace's). If not, no batch is made and the run is
 *   skipped_credits, its `error` naming insufficient_credits or spend_cap_reached.
 * - The active-job cap never fails a run: its batches enter one after another, each when the
 *   cap leaves room for it (a 429 from admission leaves the rest for the next advance); the
 *   scheduler advances open runs on every tick.
 * - A run is running once its first batch is admitted, and completed when every batch is made
 *   and every job of them has ended; its observations are recorded in the same transaction that
 *   completes it (observations.ts), so a crash records them once or not at all.
 */
export const MONITOR_RUN_ENDPOINT = 'monitor-run';

/** Open runs advanced per scheduler pass. */
export const MONITOR_ADVANCE_LIMIT = 100;

/** The tenant a monitor's work is created for: its workspace, as the key that made it (whose monthly cap its runs count against). */
export async function monitorTenant(
  db: Executor,
  monitor: Pick<MonitorRow, 'workspace_id' | 'created_by_kind' | 'created_by_id'>,
): Promise<Tenant> {
  const workspace = await findWorkspace(db, monitor.workspace_id);
  if (!workspace) throw new Error(`workspace ${monitor.workspace_id} of a monitor does not exist`);
  return { workspace, keyId: monitor.created_by_kind === 'key' ? monitor.created_by_id : null, role: null };
}

function runValues(monitor: MonitorRow, trigger: 'scheduled' | 'manual', scheduledFor: Date, now: Date) {
  return {
    id: newId('mrn'),
    monitor_id: monitor.id,
    workspace_id: monitor.workspace_id,
    trigger,
    scheduled_for: scheduledFor,
    targets: JSON.stringify(monitor.targets),
    requested_limit: monitor.requested_limit,
    status: 'queued' as const,
    batch_ids: '[]',
    created_at: now,
  };
}

/**
 * POST /v1/monitors/{id}/run: a manual run, made and started at once (so an unaffordable one
 * answers skipped_credits). The monitor's status and next_run_at do not change; last_run_at
 * does. A paused monitor may be run by hand.
 */
export async function runMonitorNow(services: Services, tenant: Tenant, monitorId: string): Promise<MonitorRunRow> {
  const now = services.clock.now();
  const run = await services.db.transaction().execute(async (tx) => {
    const monitor = await lockMonitorOrThrow(tx, tenant, monitorId);
    await tx.updateTable('monitors').set({ last_run_at: now }).where('id', '=', monitor.id).execute();
    return tx
      .insertInto('monitor_runs')
      .values(runValues(monitor, 'manual', now, now))
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await advanceMonitorRun(services, run.id)) ?? run;
}

/**
 * The scheduler's claim of due monitors (active, not deleted, next_run_at at or before now),
 * FOR UPDATE SKIP LOCKED so concurrent schedulers take disjoint sets: each gets its run
 * (scheduled_for its next_run_at; the unique index monitor_runs_occurrence_once makes a second
 * run of one occurrence impossible) and next_run_at moves to the first occurrence after now
 * (occurrences missed while the scheduler was down are not run one by one). Returns the runs made.
 */
export async function claimDueMonitorRuns(db: Db, now: Date, limit = MONITOR_ADVANCE_LIMIT): Promise<MonitorRunRow[]> {
  return db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('monitors')
      .selectAll()
      .where('status', '=', 'active')
      .where('deleted_at', 'is', null)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return [];
    const runs = await tx
      .insertInto('monitor_runs')
      .values(due.map((m) => runValues(m, 'scheduled', m.next_run_at!, now)))
      .onConflict((oc) => oc.columns(['monitor_id', 'scheduled_for']).where('trigger', '=', 'scheduled').doNothing())
      .returningAll()
      .execute();
    for (const monitor of due) {
      await tx
        .updateTable('monitors')
        .set({ next_run_at: nextMonitorRun(monitor, now), last_run_at: now })
        .where('id', '=', monitor.id)
        .execute();
    }
    return runs;
  });
}

/**
 * One scheduler pass over monitors: due monitors get their runs, then every open run (new ones
 * included) is advanced. Returns the runs made and how many open runs were advanced.
 */
export async function dispatchMonitors(
  services: Services,
  now: Date = services.clock.now(),
): Promise<{ claimed: number; advanced: number }> {
  const claimed = await claimDueMonitorRuns(services.db, now);
  const open = await services.db
    .selectFrom('monitor_runs')
    .select('id')
    .where('status', 'in', ['queued', 'running'])
    .orderBy('created_at')
    .limit(MONITOR_ADVANCE_LIMIT)
    .execute();
  let advanced = 0;
  for (const { id } of open) {
    if (await advanceMonitorRun(services, id)) advanced += 1;
  }
  return { claimed: claimed.length, advanced };
}

type Outcome = Pick<MonitorRunRow, 'status' | 'batch_ids' | 'next_chunk' | 'started_at' | 'finished_at' | 'observations' | 'changes'> & {
  error: unknown;
};

/**
 * Advances one open run, holding its row (FOR UPDATE SKIP LOCKED: a run another process is
 * advancing is left to it, and undefined returned): the all-or-nothing check when it starts,
 * then as many of its batches as the active-job cap admits, then its completion once all its
 * jobs have ended. Returns the run as stored after.
 */
export async function advanceMonitorRun(services: Services, runId: string): Promise<MonitorRunRow | undefined> {
  const tx: ControlledTransaction<Database> = await services.db.startTransaction().execute();
  try {
    const run = await tx
      .selectFrom('monitor_runs')
      .selectAll()
      .where('id', '=', runId)
      .where('status', 'in', ['queued', 'running'])
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!run) {
      await tx.rollback().execute();
      return undefined;
    }
    const monitor = await tx.selectFrom('monitors').selectAll().where('id', '=', run.monitor_id).executeTakeFirstOrThrow();
    const outcome = await advance(services, tx, monitor, run);
    const stored = await tx
      .updateTable('monitor_runs')
      .set({
        status: outcome.status,
        batch_ids: JSON.stringify(outcome.batch_ids),
        next_chunk: outcome.next_chunk,
        started_at: outcome.started_at,
        finished_at: outcome.finished_at,
        observations: outcome.observations,
        changes: outcome.changes,
        error: outcome.error === null ? null : JSON.stringify(outcome.error),
      })
      .where('id', '=', run.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (stored.status === 'completed') await recordRunCompleted(tx, stored, services.clock.now());
    await tx.commit().execute();
    return stored;
  } catch (error) {
    if (!tx.isCommitted && !tx.isRolledBack)
      await tx
        .rollback()
        .execute()
        .catch(() => undefined);
    throw error;
  }
}

/** The run's targets cut into its batches. */
export function chunksOf(targets: readonly string[]): string[][] {
  const chunks: string[][] = [];
  for (let i = 0; i < targets.length; i += MONITOR_BATCH_SIZE) chunks.push(targets.slice(i, i + MONITOR_BATCH_SIZE));
  return chunks;
}

function errorOf(error: unknown): Record<string, unknown> | null {
  if (error instanceof ApiError) return { error: error.code, message: error.message, ...error.fields };
  if (error instanceof RequestValidationError) return { error: 'invalid_request', message: error.message, detail: error.issues };
  return null;
}

async function advance(services: Services, tx: Tx, monitor: MonitorRow, run: MonitorRunRow): Promise<Outcome> {
  const now = services.clock.now();
  const out: Outcome = {
    status: run.status,
    batch_ids: [...run.batch_ids],
    next_chunk: run.next_chunk,
    started_at: run.started_at,
    finished_at: run.finished_at,
    observations: run.observations,
    changes: run.changes,
    error: run.error ?? null,
  };
  const tenant = await monitorTenant(tx, monitor);
  const recipe = { platform: monitor.platform, operation: monitor.operation, limit: run.requested_limit };
  const chunks = chunksOf(run.targets);
  if (run.started_at === null) {
    out.started_at = now;
    const refused = await refusalOfWholeRun(services, tenant, recipe, run.targets);
    if (refused) {
      const credits = refused instanceof ApiError && (refused.code === 'insufficient_credits' || refused.code === 'spend_cap_reached');
      return { ...out, status: credits ? 'skipped_credits' : 'failed', finished_at: now, error: errorOf(refused) };
    }
  }
  if (monitor.deleted_at !== null && out.next_chunk < chunks.length) {
    return {
      ...out,
      status: 'failed',
      finished_at: now,
      error: { error: 'monitor_not_found', message: `Monitor ${monitor.id} was deleted during the run.`, monitor_id: monitor.id },
    };
  }
  while (out.next_chunk < chunks.length) {
    try {
      const created = await createBatch(
        services,
        tenant,
        {
          ...recipe,
          targets: chunks[out.next_chunk],
          ...(monitor.destination_id !== null ? { destination_id: monitor.destination_id } : {}),
        },
        { endpoint: MONITOR_RUN_ENDPOINT, idempotencyKey: `${run.id}:${out.next_chunk}`, requestId: run.id },
      );
      if (!out.batch_ids.includes(created.batch.id)) out.batch_ids.push(created.batch.id);
      out.next_chunk += 1;
      out.status = 'running';
    } catch (error) {
      // The cap never fails a run: the rest waits for room.
      if (error instanceof ApiError && error.code === 'concurrent_job_limit_exceeded') return out;
      const detail = errorOf(error);
      if (detail === null) throw error;
      return { ...out, status: 'failed', finished_at: now, error: detail };
    }
  }
  if (await batchesEnded(tx, out.batch_ids)) {
    const { observations, changes } = await recordRunObservations(services, tx, monitor, run, out.batch_ids, now);
    return { ...out, status: 'completed', finished_at: now, observations, changes };
  }
  return out;
}

/** Whether every job of the batches has ended. */
async function batchesEnded(db: Executor, batchIds: readonly string[]): Promise<boolean> {
  if (batchIds.length === 0) return true;
  const { rows } = await sql<{ open: boolean }>`
    select exists (select 1 from jobs where batch_id = any(${[...batchIds]}::text[]) and status in ('queued', 'running')) as open
  `.execute(db);
  return !rows[0].open;
}

/**
 * What admission would refuse the whole run with, asked of the admission planner on the state it
 * reads, as one submission of every target, without the active-job cap (which only paces the
 * batches): 402 insufficient_credits or spend_cap_reached, or a check of the recipe; null when
 * all of it is affordable now.
 */
async function refusalOfWholeRun(
  services: Services,
  tenant: Tenant,
  input: { platform: string; operation: string; limit: number },
  targets: string[],
): Promise<ApiError | RequestValidationError | null> {
  let submission: Submission;
  try {
    const { recipe, normalized, keys } = resolveRecipe(
      input,
      targets.map((value, i) => ({ value, loc: ['body', 'targets', i] })),
      tenant.workspace,
      services.gate,
    );
    submission = {
      tenant: { ...tenant, workspace: { ...tenant.workspace, max_active_jobs: Number.MAX_SAFE_INTEGER } },
      recipe,
      targets: targets.map((target, i) => ({ target, normalized: normalized[i], key: keys[i] })),
      jobIds: targets.map((_, i) => `run_${i}`),
      batchId: 'run',
      idempotency: null,
      skipCache: true,
      scheduleId: null,
      newOnly: false,
      requestId: null,
    };
  } catch (error) {
    if (error instanceof ApiError || error instanceof RequestValidationError) return error;
    throw error;
  }
  const now = services.clock.now();
  const state = await readAdmissionState(services, services.db, [submission], [{ kind: 'none' }], now, 'peek');
  const [decision] = planAdmission([submission], state, now, { maxAttempts: services.config.jobMaxAttempts, useCache: false }).decisions;
  return decision?.kind === 'refused' ? decision.error : null;
}
