/**
 * Due selection and dispatch of automatic schedule occurrences.
 *
 * Exactly once, with any number of scheduler processes, and one of them killed at any point:
 *
 * 1. Claim (one short transaction): due schedules (active, not deleted, next_run_at <= now) are
 *    selected `FOR UPDATE SKIP LOCKED`, so concurrent schedulers take disjoint sets and never
 *    wait on each other. For each, the run row (schedule_id, scheduled_for) is inserted and
 *    next_run_at advanced past now, in the same transaction. The unique index
 *    schedule_runs_occurrence_once (trigger 'scheduled') makes a second row for the same
 *    occurrence impossible even if two processes somehow read the same due state (a schedule
 *    replaced by PUT to the occurrence just claimed, a clock that differs between hosts): the
 *    insert does nothing on conflict. A process killed before commit leaves no trace; the
 *    schedule is still due and the next tick of any process claims it.
 * 2. Hold (right after the claim commits, on the same connection): the claimed runs are locked
 *    FOR UPDATE in a transaction that stays open until they are dispatched (holdRuns in the
 *    domain). The lock is the dispatch's lease: Postgres releases it the moment the process
 *    dies or loses its connection, and never while it lives.
 * 3. Dispatch: the run's job or batch is created by the same domain functions as POST /v1/jobs
 *    and POST /v1/batches, with the run ID as idempotency key; the outcomes are written on the
 *    runs in the holding transaction, which commits.
 * 4. Recovery (every RECOVER_EVERY_MS): a process killed between 1 and 3 leaves runs still
 *    `queued` with no job, no batch and no dispatched_at, and no lock on them. Any scheduler
 *    holds such runs (FOR UPDATE SKIP LOCKED: runs a live dispatcher holds are skipped) and
 *    re-dispatches them: it first looks up the idempotency record of the run ID (the work a dead
 *    attempt committed), else creates the work with that same key. Runs younger than
 *    RECOVERY_GRACE_MS are left alone, so a claim is not taken in the instant between its commit
 *    and its hold; that only spares a needless hand-over, exactly once holds either way.
 *
 * A lease column renewed while dispatching would need a renewal loop and clocks that agree
 * between hosts, and its takeover waits out the lease; the row lock needs neither, and the
 * unique index needs no cooperation at all.
 */
import { sql } from 'kysely';
import type { ScheduleRow, ScheduleRunRow, ScheduleStatus } from '@sdx/db';
import {
  CATCH_UP_WINDOW_MS,
  IDEMPOTENCY_TTL_MS,
  attemptScheduleRun,
  failExpiredRuns,
  holdRuns,
  insertScheduledRuns,
  type RunHold,
  type ScheduleRunOutcome,
  recurrenceOf,
  runTenant,
  schedulesWithActiveWork,
  type Services,
  type Tenant,
} from '@sdx/domain/scheduler';
import { observeDispatchLag } from '@sdx/metrics';
import { latestOccurrenceAtOrBefore, nextOccurrence } from '@sdx/recurrence';

export interface DispatchOptions {
  /** Defaults to services.clock.now(). Dispatch itself (job creation, dispatched_at) reads services.clock. */
  now?: Date;
  /** Schedules claimed per transaction. */
  limit?: number;
  /** Runs dispatched at once. */
  concurrency?: number;
  /** The latest missed occurrence is still dispatched when at most this old. */
  catchUpMs?: number;
}

export interface DispatchResult {
  /** Schedules claimed (advanced) by this call. */
  claimed: number;
  /** Runs created by this call, with their outcome. */
  runs: ScheduleRunRow[];
  /** Schedules whose due occurrence was older than the catch-up window and was dropped. */
  dropped: number;
}

export const DEFAULT_CLAIM_LIMIT = 200;
export const DEFAULT_DISPATCH_CONCURRENCY = 16;
/** Recovery leaves alone runs younger than this: their claim's own hold is a round trip behind. */
export const RECOVERY_GRACE_MS = 2_000;
/** How often a scheduler looks for runs nobody holds (wall clock). */
export const RECOVER_EVERY_MS = 1_000;

interface Plan {
  schedule: ScheduleRow;
  /** The occurrence to run now, or null when it is too old (dropped). */
  scheduledFor: Date | null;
  nextRunAt: Date | null;
  status: ScheduleStatus;
}

/**
 * What a due schedule does at `now`: the occurrence to run is the latest one at or before now
 * (at least next_run_at), i.e. after downtime only the newest missed occurrence, and only when
 * it is within the catch-up window; the occurrences before it are passed over without runs.
 * next_run_at moves to the first occurrence after now; a once schedule completes.
 */
export function planOccurrence(schedule: ScheduleRow, now: Date, catchUpMs = CATCH_UP_WINDOW_MS): Plan {
  const rule = recurrenceOf(schedule);
  const due = schedule.next_run_at ?? schedule.starts_at;
  const latest = latestOccurrenceAtOrBefore(rule, now);
  const occurrence = latest && latest.getTime() > due.getTime() ? latest : due;
  const scheduledFor = now.getTime() - occurrence.getTime() <= catchUpMs ? occurrence : null;
  const nextRunAt = nextOccurrence(rule, now);
  return { schedule, scheduledFor, nextRunAt, status: nextRunAt === null ? 'completed' : schedule.status };
}

/**
 * The claim transaction of step 1: locks up to `limit` due schedules (skipping those another
 * process holds), inserts one run per occurrence to run (skipped_overlap at once when the
 * previous occurrence's work is still active) and advances next_run_at.
 */
export async function claimDueRuns(
  services: Pick<Services, 'db' | 'log'>,
  now: Date,
  options: { limit?: number; catchUpMs?: number } = {},
): Promise<{ claimed: number; dropped: number; runs: Array<{ schedule: ScheduleRow; run: ScheduleRunRow }> }> {
  const limit = options.limit ?? DEFAULT_CLAIM_LIMIT;
  const catchUpMs = options.catchUpMs ?? CATCH_UP_WINDOW_MS;
  return services.db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('schedules')
      .selectAll()
      .where('status', '=', 'active')
      .where('deleted_at', 'is', null)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return { claimed: 0, dropped: 0, runs: [] };

    const plans: Plan[] = due.map((schedule) => {
      try {
        return planOccurrence(schedule, now, catchUpMs);
      } catch (error) {
        // A rule that cannot produce occurrences (a zone the runtime no longer knows) stops
        // being due instead of blocking the queue; it shows next_run_at null.
        services.log.error({ err: error, scheduleId: schedule.id }, 'schedule recurrence failed; no further occurrences');
        return { schedule, scheduledFor: null, nextRunAt: null, status: schedule.status };
      }
    });
    const toRun = plans.filter((p) => p.scheduledFor !== null);
    const overlapping = await schedulesWithActiveWork(
      tx,
      toRun.filter((p) => p.schedule.overlap_policy === 'skip').map((p) => p.schedule.id),
    );
    // The runs (the unique index makes a second run of an occurrence a no-op), with the
    // schedule.run.skipped events of those skipped at once (overlap), in this transaction.
    const inserted = await insertScheduledRuns(
      tx,
      toRun.map((p) => ({ schedule: p.schedule, scheduledFor: p.scheduledFor!, overlapping: overlapping.has(p.schedule.id) })),
      now,
    );
    const ran = new Map(inserted.map((run) => [run.schedule_id, run]));

    const rows = plans.map(
      (p) => sql`(${p.schedule.id}::text, ${p.nextRunAt}::timestamptz, ${p.status}::text, ${ran.has(p.schedule.id)}::boolean)`,
    );
    await sql`
      update schedules s
      set next_run_at = v.next_run_at,
          status = v.status,
          last_run_at = case when v.ran then ${now}::timestamptz else s.last_run_at end
      from (values ${sql.join(rows)}) as v(id, next_run_at, status, ran)
      where s.id = v.id
    `.execute(tx);

    const byId = new Map(due.map((s) => [s.id, s]));
    return {
      claimed: due.length,
      dropped: plans.length - toRun.length,
      runs: inserted.map((run) => ({ schedule: byId.get(run.schedule_id)!, run })),
    };
  });
}

/** A claim (step 1) with its runs held (step 2). */
interface HeldClaim {
  claim: Awaited<ReturnType<typeof claimDueRuns>>;
  hold: RunHold;
}

/** Steps 1 and 2: the hold is taken as soon as the claim has committed. */
async function claimAndHold(services: Services, now: Date, options: DispatchOptions): Promise<HeldClaim> {
  const claim = await claimDueRuns(services, now, options);
  const hold = await holdRuns(services.db, { ids: claim.runs.filter((c) => c.run.status === 'queued').map((c) => c.run.id) });
  return { claim, hold };
}

/** Claims due occurrences, holds and dispatches them. One round; call it until `claimed` < limit. */
export async function dispatchDue(services: Services, options: DispatchOptions = {}): Promise<DispatchResult> {
  return dispatchClaim(services, await claimAndHold(services, options.now ?? services.clock.now(), options), options);
}

/**
 * Dispatches everything due, round after round until a round comes back short. The next claim
 * (and its hold) runs while the current round dispatches, so the claim transactions cost no
 * dispatch time.
 */
export async function dispatchAllDue(services: Services, options: Omit<DispatchOptions, 'now'> = {}): Promise<DispatchResult> {
  const limit = options.limit ?? DEFAULT_CLAIM_LIMIT;
  const total: DispatchResult = { claimed: 0, runs: [], dropped: 0 };
  let next: Promise<HeldClaim> | null = claimAndHold(services, services.clock.now(), options);
  while (next) {
    const held: HeldClaim = await next;
    next = held.claim.claimed >= limit ? claimAndHold(services, services.clock.now(), options) : null;
    // Keep a failed early claim from being an unhandled rejection; the await above rethrows it.
    next?.catch(() => undefined);
    let round: DispatchResult;
    try {
      round = await dispatchClaim(services, held, options);
    } catch (error) {
      // The next claim's runs are left to recovery, unheld, rather than held by no one's dispatch.
      await next?.then((h) => h.hold.release()).catch(() => undefined);
      throw error;
    }
    total.claimed += round.claimed;
    total.dropped += round.dropped;
    total.runs.push(...round.runs);
  }
  return total;
}

async function dispatchClaim(services: Services, { claim, hold }: HeldClaim, options: DispatchOptions): Promise<DispatchResult> {
  const held = new Map(hold.runs.map((run) => [run.id, run]));
  const pending = claim.runs.flatMap((c) => (held.has(c.run.id) ? [{ schedule: c.schedule, run: held.get(c.run.id)! }] : []));
  const settled = claim.runs.filter((c) => !held.has(c.run.id)).map((c) => c.run);
  const dispatched = await dispatchAll(services, hold, pending, options.concurrency ?? DEFAULT_DISPATCH_CONCURRENCY, false);
  return { claimed: claim.claimed, runs: [...settled, ...dispatched], dropped: claim.dropped };
}

export interface RecoverOptions {
  now?: Date;
  /** Runs younger than this are left alone (RECOVERY_GRACE_MS). */
  graceMs?: number;
  limit?: number;
  concurrency?: number;
}

/**
 * Step 4: holds and re-dispatches runs no live dispatcher holds (status queued, no job, no
 * batch, no dispatched_at, older than the grace). A run older than the idempotency window can
 * no longer be re-dispatched safely and is marked failed.
 */
export async function recoverStalledRuns(services: Services, options: RecoverOptions = {}): Promise<ScheduleRunRow[]> {
  const now = options.now ?? services.clock.now();
  const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_TTL_MS + 60_000);
  await failExpiredRuns(services.db, expiredBefore);

  const hold = await holdRuns(services.db, {
    createdBefore: new Date(now.getTime() - (options.graceMs ?? RECOVERY_GRACE_MS)),
    limit: options.limit ?? DEFAULT_CLAIM_LIMIT,
  });
  if (hold.runs.length === 0) {
    await hold.release();
    return [];
  }
  let schedules: ScheduleRow[];
  try {
    schedules = await services.db
      .selectFrom('schedules')
      .selectAll()
      .where('id', 'in', [...new Set(hold.runs.map((r) => r.schedule_id))])
      .execute();
  } catch (error) {
    await hold.release().catch(() => undefined);
    throw error;
  }
  const byId = new Map(schedules.map((s) => [s.id, s]));
  const dispatched = await dispatchAll(
    services,
    hold,
    hold.runs.map((run) => ({ schedule: byId.get(run.schedule_id)!, run })),
    options.concurrency ?? DEFAULT_DISPATCH_CONCURRENCY,
    true,
  );
  for (const run of dispatched) {
    services.log.warn({ scheduleId: run.schedule_id, runId: run.id, status: run.status }, 'recovered an undispatched schedule run');
  }
  return dispatched;
}

/**
 * Dispatches held runs `concurrency` at a time, then records every outcome in one statement
 * and ends the hold. A run whose dispatch threw (database unreachable) is returned as it was,
 * left for recovery.
 */
async function dispatchAll(
  services: Services,
  hold: RunHold,
  items: Array<{ schedule: ScheduleRow; run: ScheduleRunRow }>,
  concurrency: number,
  recovering: boolean,
): Promise<ScheduleRunRow[]> {
  let tenants: Map<string, Tenant>;
  try {
    tenants = await loadTenants(
      services,
      items.map((i) => i.schedule.workspace_id),
    );
  } catch (error) {
    await hold.release().catch(() => undefined);
    throw error;
  }
  const outcomes = await mapConcurrent(items, concurrency, async ({ schedule, run }): Promise<ScheduleRunOutcome | null> => {
    try {
      const workspace = tenants.get(schedule.workspace_id);
      return await attemptScheduleRun(services, schedule, run, { tenant: workspace && runTenant(workspace, schedule), recovering });
    } catch (error) {
      services.log.error({ err: error, scheduleId: schedule.id, runId: run.id }, 'schedule dispatch failed; left for recovery');
      return null;
    }
  });
  const settled = items.flatMap(({ run }, i) => (outcomes[i] ? [{ run, outcome: outcomes[i] }] : []));
  const recorded = new Map((await hold.settle(settled, services.clock.now())).map((r) => [r.id, r]));
  for (const run of recorded.values()) {
    if (run.trigger === 'scheduled' && run.dispatched_at)
      observeDispatchLag((run.dispatched_at.getTime() - run.scheduled_for.getTime()) / 1000);
  }
  return items.map(({ run }) => recorded.get(run.id) ?? run);
}

async function loadTenants(services: Pick<Services, 'db'>, workspaceIds: string[]): Promise<Map<string, Tenant>> {
  const ids = [...new Set(workspaceIds)];
  if (ids.length === 0) return new Map();
  const rows = await services.db.selectFrom('workspaces').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((workspace) => [workspace.id, { workspace, keyId: null, role: null }]));
}

async function mapConcurrent<T, R>(items: T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await fn(items[index]);
    }
  });
  await Promise.all(lanes);
  return out;
}
