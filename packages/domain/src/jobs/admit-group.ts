import type { JobRow, NewJob, Tx } from '@sdx/db';
import { planEntries, sharedEntry } from '@sdx/queue';
import type { Services, Tenant } from '../context';
import { type PlannedReservation, planReservation } from '../credits/credits';
import { ApiError } from '../errors';
import { type FlushResult, GroupCommit, perProcess, REQUEST_PATH_BOUNDS, refusedData } from '../group-commit';
import { dropClaims, findClaimRecords, type IdempotencyClaim, insertClaims, pointClaims, scopeId } from '../idempotency/idempotency';
import { type AdmitTarget, checkActiveCap, lockForAdmission, queuedJobRow, reuseKey, writeAdmissions } from './admission';
import { type Recipe, requestKey } from './recipe';

/** One checked single-job submission (POST /v1/jobs, /v1/extract, a single-target schedule run). */
export interface JobSubmission {
  tenant: Tenant;
  recipe: Recipe;
  target: AdmitTarget;
  /** The ID a new job gets (pre-allocated so an idempotency record can name it). */
  jobId: string;
  idempotency: { endpoint: string; key: string; requestHash: string } | null;
  skipCache: boolean;
  scheduleId: string | null;
}

export interface CreatedJob {
  job: JobRow;
  deduplicated: boolean;
  idempotentReplay: boolean;
  /** Whether a new queue entry is needed (a new queued job). */
  enqueue: boolean;
}

/**
 * A submission whose Idempotency-Key another submission of the same group claimed: it goes to
 * the next group, where it finds the first one's committed record (a replay), or takes the key
 * if the first one failed, exactly as a concurrent request waiting on the key's row would.
 */
const NEXT_GROUP = Symbol('next group');
type Outcome = CreatedJob | typeof NEXT_GROUP;

const groups = new WeakMap<Services, GroupCommit<JobSubmission, Outcome>>();

/**
 * Admits a single-job submission. Concurrent submissions of one process are admitted together
 * (see GroupCommit): one transaction, one lock of each workspace's balance row, one statement
 * per step for the whole group, one bulk queue add after commit, in which the new jobs share
 * entries (planEntries). Each submission still gets exactly the answer it would get alone, in
 * submission order: replay, 409, deduplicated, cached, 429, 402 or a new queued job with its
 * reservation. It is answered once the group has committed; the queue add goes on behind.
 */
export async function admitSubmission(services: Services, submission: JobSubmission): Promise<CreatedJob> {
  const group = perProcess(groups, services, () => new GroupCommit((items: JobSubmission[]) => admitGroup(services, items), { maxBatch: 64, ...REQUEST_PATH_BOUNDS }));
  for (;;) {
    const outcome = await group.submit(submission);
    if (outcome !== NEXT_GROUP) return outcome;
  }
}

/**
 * The admission of one group. When Postgres refuses its data (a data exception or constraint
 * violation), each submission is tried again alone, so a submission it refuses fails only
 * itself, as it would have without grouping. Any other failure (database unreachable, pool
 * exhausted) is every submission's answer at once.
 */
async function admitGroup(services: Services, items: JobSubmission[]): Promise<FlushResult<Outcome>> {
  let results: FlushResult<Outcome>;
  try {
    results = await admitTogether(services, items);
  } catch (error) {
    if (items.length === 1 || !refusedData(error)) throw error;
    services.log.warn({ err: error, submissions: items.length }, 'group admission failed; admitting its submissions one by one');
    results = [];
    for (const item of items) {
      try {
        results.push(...(await admitTogether(services, [item])));
      } catch (err) {
        results.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
  }
  // The new jobs are committed as queued: the group's queue add only wakes workers, so nobody
  // waits for it (ExtractionQueues.close waits for it). If it fails, the reconciler adds the
  // entries once Redis answers.
  const fresh = results.filter((r): r is CreatedJob => r !== NEXT_GROUP && !(r instanceof Error) && r.enqueue);
  if (fresh.length > 0) {
    services.queues
      .enqueueMany(fresh.map((r) => ({ jobId: r.job.id, attempt: r.job.attempts + 1, batchChild: false, entry: r.job.queue_entry })))
      .catch((error) => services.log.warn({ err: error, jobs: fresh.length }, 'enqueue failed; the reconciler will retry'));
  }
  return results;
}

/** One transaction for the given submissions, retried when Postgres picks it as a deadlock victim. */
async function admitTogether(services: Services, items: JobSubmission[]): Promise<FlushResult<Outcome>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await services.db.transaction().execute((tx) => admitInTransaction(services, tx, items));
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 3) throw error;
      services.log.warn({ submissions: items.length, attempt }, 'group admission chosen as deadlock victim; retrying');
    }
  }
}

/** The idempotency claim of a submission that carries a key. */
function claimOf(s: JobSubmission, now: Date): IdempotencyClaim {
  return {
    workspaceId: s.tenant.workspace.id,
    endpoint: s.idempotency!.endpoint,
    key: s.idempotency!.key,
    requestHash: s.idempotency!.requestHash,
    resourceType: 'job',
    resourceId: s.jobId,
    now,
  };
}

async function admitInTransaction(services: Services, tx: Tx, items: JobSubmission[]): Promise<FlushResult<Outcome>> {
  const now = services.clock.now();
  const results: Array<Outcome | Error | undefined> = new Array(items.length);
  /** Submissions holding an idempotency claim inserted in this transaction. */
  const claimed = new Set<number>();

  // 1. Idempotency keys, claimed in key order (so two groups cannot deadlock on them).
  const claims = new Map<number, IdempotencyClaim>();
  const claimers = new Map<string, number>();
  items.forEach((s, i) => {
    if (!s.idempotency) return;
    const claim = claimOf(s, now);
    claims.set(i, claim);
    const id = scopeId(claim);
    if (claimers.has(id)) results[i] = NEXT_GROUP;
    else claimers.set(id, i);
  });
  if (claimers.size > 0) {
    const ordered = [...claimers.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, i]) => i);
    const won = await insertClaims(tx, ordered.map((i) => claims.get(i)!));
    const taken = ordered.filter((i) => !won.has(scopeId(claims.get(i)!)));
    for (const i of ordered) if (won.has(scopeId(claims.get(i)!))) claimed.add(i);
    if (taken.length > 0) await resolveTakenKeys(tx, items, taken.map((i) => ({ index: i, claim: claims.get(i)! })), results, claimed);
  }

  // 2. Everything left is admitted under its workspace's balance lock, in submission order.
  const pending = items.map((_, i) => i).filter((i) => results[i] === undefined);
  if (pending.length > 0) {
    const workspaces = new Map(pending.map((i) => [items[i]!.tenant.workspace.id, items[i]!.tenant.workspace]));
    const keys = pending.map((i) => requestKey(items[i]!.recipe, items[i]!.target.normalized));
    const { balances, active, reusable } = await lockForAdmission(tx, [...workspaces.values()], now, {
      requests: pending.map((i, n) => ({ workspaceId: items[i]!.tenant.workspace.id, key: keys[n]! })),
      cacheFrom: new Date(now.getTime() - services.config.cacheTtlSeconds * 1000),
    });

    const newRows: NewJob[] = [];
    const planned: PlannedReservation[] = [];
    const reserved = new Set<string>();
    /** What each pending submission is answered with, once the new rows are inserted. */
    const answers = new Map<number, { job: JobRow | string; deduplicated: boolean; enqueue: boolean }>();
    /** Jobs admitted in this group by request: a later identical submission is deduplicated onto them. */
    const admittedTwins = new Map<string, string>();
    const repoint: Array<{ index: number; jobId: string }> = [];
    const useCache = services.config.cacheTtlSeconds > 0;

    pending.forEach((i, n) => {
      const s = items[i]!;
      const workspace = s.tenant.workspace;
      const key = keys[n]!;
      const twin = admittedTwins.get(reuseKey(workspace.id, key));
      const found = reusable.get(reuseKey(workspace.id, key));
      if (twin !== undefined || (found && (found.status === 'queued' || found.status === 'running'))) {
        const job = twin ?? found!;
        answers.set(i, { job, deduplicated: true, enqueue: false });
        repoint.push({ index: i, jobId: typeof job === 'string' ? job : job.id });
        return;
      }
      if (found && useCache && !s.skipCache) {
        newRows.push(cachedJobRow(services, s, found, key, now));
        answers.set(i, { job: s.jobId, deduplicated: false, enqueue: false });
        return;
      }
      try {
        const count = active.get(workspace.id) ?? 0;
        checkActiveCap(workspace, count, 1);
        const next = planReservation(workspace, balances.get(workspace.id)!, now, {
          jobId: s.jobId,
          credits: s.recipe.maxCredits,
          units: s.recipe.maxUnits,
        });
        balances.set(workspace.id, next.balance);
        reserved.add(workspace.id);
        planned.push(next.planned);
        active.set(workspace.id, count + 1);
        admittedTwins.set(reuseKey(workspace.id, key), s.jobId);
        newRows.push(queuedJobRow(workspace.id, now, s.recipe, s.target, key, s.jobId, { maxAttempts: services.config.jobMaxAttempts, scheduleId: s.scheduleId }));
        answers.set(i, { job: s.jobId, deduplicated: false, enqueue: true });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        results[i] = error;
      }
    });

    // The new queued jobs travel in shared queue entries; each row records the entry that
    // carries its first attempt, so that the reconciler can add it again under the same ID.
    const queuedRows = newRows.filter((row) => row.status === 'queued');
    const rowById = new Map(queuedRows.map((row) => [row.id, row]));
    for (const plan of planEntries(queuedRows.map((row) => row.id), 1)) {
      for (const id of plan.jobIds) rowById.get(id)!.queue_entry = sharedEntry(plan);
    }

    // Claims of refused submissions (402, 429) are dropped, so the key stays free as if the
    // request had never been made; claims answered by existing work name that work.
    const dropped = [...claimed].filter((i) => results[i] instanceof Error).map((i) => claims.get(i)!);
    const pointed = repoint.filter((p) => claimed.has(p.index)).map((p) => ({ scope: claims.get(p.index)!, resourceId: p.jobId }));
    const last = dropped.length === 0 && pointed.length === 0;
    const inserted = await writeAdmissions(tx, now, planned, [...reserved].map((id) => balances.get(id)!), newRows, { last });
    const byId = new Map(inserted.map((job) => [job.id, job]));
    for (const [i, answer] of answers) {
      const job = typeof answer.job === 'string' ? byId.get(answer.job)! : answer.job;
      results[i] = { job, deduplicated: answer.deduplicated, idempotentReplay: false, enqueue: answer.enqueue };
    }
    if (!last) {
      await dropClaims(tx, dropped);
      await pointClaims(tx, pointed);
    }
  }
  return results.map((r) => r ?? new Error('group admission: submission left unanswered'));
}

/**
 * Submissions whose key is held by a live record: a different body is 409
 * idempotency_key_conflict; the same body replays the work the record names.
 */
async function resolveTakenKeys(
  tx: Tx,
  items: JobSubmission[],
  taken: Array<{ index: number; claim: IdempotencyClaim }>,
  results: Array<Outcome | Error | undefined>,
  claimed: Set<number>,
): Promise<void> {
  const records = await findClaimRecords(tx, taken.map((t) => t.claim));
  const replays: Array<{ index: number; resourceId: string }> = [];
  for (const { index: i, claim } of taken) {
    const record = records.get(scopeId(claim));
    if (!record) {
      // Deleted between the insert and this read (purged as expired): try again next group.
      results[i] = NEXT_GROUP;
    } else if (record.request_hash !== claim.requestHash) {
      results[i] = new ApiError('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body.', {
        idempotency_key: claim.key,
      });
    } else {
      replays.push({ index: i, resourceId: record.resource_id });
    }
  }
  if (replays.length === 0) return;
  const jobs = await tx.selectFrom('jobs').selectAll().where('id', 'in', replays.map((r) => r.resourceId)).execute();
  const jobById = new Map(jobs.map((j) => [j.id, j]));
  for (const { index: i, resourceId } of replays) {
    const job = jobById.get(resourceId);
    if (job && job.workspace_id === items[i]!.tenant.workspace.id) {
      results[i] = { job, deduplicated: false, idempotentReplay: true, enqueue: false };
    } else {
      // The record names no job of this workspace: the request is admitted afresh and the
      // record pointed at what answers it.
      claimed.add(i);
    }
  }
}

/** A new job that is already completed, reusing a fresh result: billed nothing. */
function cachedJobRow(services: Services, s: JobSubmission, fresh: JobRow, key: string, now: Date): NewJob {
  return {
    id: s.jobId,
    workspace_id: s.tenant.workspace.id,
    schedule_id: s.scheduleId,
    platform: fresh.platform,
    operation: fresh.operation,
    target: s.target.target,
    normalized_target: s.target.normalized,
    request_key: key,
    requested_limit: fresh.requested_limit,
    include_posts: fresh.include_posts,
    status: 'completed',
    attempts: 0,
    max_attempts: services.config.jobMaxAttempts,
    progress_stage: 'completed',
    progress_message: `Reused the result of ${fresh.id}`,
    progress_current: fresh.result_count ?? 0,
    progress_total: fresh.result_count,
    result_count: fresh.result_count,
    billed_units: 0,
    credit_rate: fresh.credit_rate,
    results_per_credit: fresh.results_per_credit,
    base_credits: fresh.base_credits,
    reserved_credits: 0,
    billed_credits: 0,
    cached: true,
    source_job_id: fresh.id,
    created_at: now,
    started_at: now,
    finished_at: now,
  };
}

