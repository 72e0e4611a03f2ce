import { type ControlledTransaction, sql } from 'kysely';
import type { Database, Db, Executor, ScheduleRow, ScheduleRunRow, ScheduleRunStatus, Tx } from '@sdx/db';
import { newId } from '../ids';
import { inTransaction } from '../tx';
import { recordEvents, runCandidates } from '../webhooks/events';

/**
 * The one home of every write of schedule_runs: the insert of manual and scheduled runs, the
 * dispatcher's hold on undispatched runs and the outcomes it records, and recovery's failing of
 * runs too old to dispatch. Each write that settles a run (inserted skipped, dispatched or
 * skipped later) writes the run's webhook event (schedule.run.dispatched, schedule.run.skipped)
 * in the same transaction. Reads of runs stay in queries.ts and dispatch-run.ts.
 */

/** What dispatching one run came to. */
export interface ScheduleRunOutcome {
  status: ScheduleRunStatus;
  jobId: string | null;
  batchId: string | null;
  error: Record<string, unknown> | null;
}

/**
 * A manual occurrence of a schedule (trigger manual, scheduled_for now): queued, or
 * skipped_overlap when its previous work is still active; its skip event written with it.
 */
export async function insertManualRun(tx: Tx, schedule: ScheduleRow, now: Date, overlapping: boolean): Promise<ScheduleRunRow> {
  const run = await tx
    .insertInto('schedule_runs')
    .values({
      id: newId('run'),
      schedule_id: schedule.id,
      workspace_id: schedule.workspace_id,
      trigger: 'manual',
      scheduled_for: now,
      status: overlapping ? 'skipped_overlap' : 'queued',
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordEvents(tx, now, runCandidates([run]));
  return run;
}

/** An automatic occurrence the scheduler claims. */
export interface ScheduledOccurrence {
  schedule: ScheduleRow;
  scheduledFor: Date;
  /** The previous occurrence's work is still active (overlap_policy skip): recorded skipped_overlap. */
  overlapping: boolean;
}

/**
 * The runs of automatic occurrences, in one statement. The unique index
 * schedule_runs_occurrence_once (schedule_id, scheduled_for where trigger 'scheduled') makes a
 * second row for the same occurrence impossible: that insert does nothing and its run is not
 * returned. An occurrence skipped at once (overlap) tells schedule.run.skipped in the same
 * transaction. Returns the runs inserted.
 */
export async function insertScheduledRuns(tx: Tx, occurrences: readonly ScheduledOccurrence[], now: Date): Promise<ScheduleRunRow[]> {
  if (occurrences.length === 0) return [];
  const inserted = await tx
    .insertInto('schedule_runs')
    .values(
      occurrences.map((o) => ({
        id: newId('run'),
        schedule_id: o.schedule.id,
        workspace_id: o.schedule.workspace_id,
        trigger: 'scheduled' as const,
        scheduled_for: o.scheduledFor,
        status: o.overlapping ? ('skipped_overlap' as const) : ('queued' as const),
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(['schedule_id', 'scheduled_for']).where('trigger', '=', 'scheduled').doNothing())
    .returningAll()
    .execute();
  await recordEvents(tx, now, runCandidates(inserted));
  return inserted;
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
  if ('ids' in which && which.ids.length === 0) return { runs: [], settle: () => Promise.resolve([]), release: () => Promise.resolve() };
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
    query =
      'ids' in which
        ? query.where('id', 'in', [...which.ids])
        : query.where('created_at', '<=', which.createdBefore).orderBy('created_at').limit(which.limit);
    runs = await query.forUpdate().skipLocked().execute();
  } catch (error) {
    await tx
      .rollback()
      .execute()
      .catch(() => undefined);
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

/**
 * Recovery's end of the line: undispatched runs (queued, no job, no batch, no dispatched_at)
 * created before `createdBefore` can no longer be re-dispatched safely (their idempotency record
 * may be gone) and are marked failed. Runs a dispatcher holds are skipped (FOR UPDATE SKIP
 * LOCKED). A failure tells no webhook event. Returns how many were marked.
 */
export async function failExpiredRuns(db: Executor, createdBefore: Date): Promise<number> {
  const result = await sql`
    update schedule_runs
    set status = 'failed', error = ${JSON.stringify({ error: 'internal_error', message: 'The occurrence could not be dispatched in time.' })}::jsonb
    where id in (
      select id from schedule_runs
      where status = 'queued' and job_id is null and batch_id is null and dispatched_at is null and created_at < ${createdBefore}
      for update skip locked
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
