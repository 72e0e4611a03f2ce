import { type BatchRow, type JobRow, type NewJob, sendTogether, type Tx } from '@sdx/db';
import { recordJobsAdmitted } from '@sdx/metrics';
import { type EnqueueRequest, planEntries, sharedEntry } from '@sdx/queue';
import { type FlushResult, GroupCommit, REQUEST_PATH_BOUNDS, refusedData } from '../group-commit';
import { dropClaims, findClaimRecords, type IdempotencyClaim, insertClaims, pointClaims, scopeId } from '../idempotency/idempotency';
import { afterAdmission, watchesBalance } from '../billing/triggers';
import { enqueueAfterCommit } from '../jobs/enqueue';
import { queueJobs } from '../jobs/state';
import type { Resources } from '../resources';
import { retryDeadlocks } from '../tx';
import { deliveryColumns } from './job-rows';
import { type Decision, type KeyState, planAdmission, type Submission } from './plan';
import { readAdmissionState } from './read-state';

/**
 * The admission's I/O, around the planner (plan.ts): one transaction per group of submissions.
 *
 * 1. Idempotency keys are claimed (in key order, so two groups cannot deadlock on them) and the
 *    records of keys already held are read, with the work they name.
 * 2. The balance rows of the group's workspaces are locked (workspace order); then, in the same
 *    round trip, the active-job counts and the reusable twins are read. Those reads are
 *    statements of their own, after the lock: a statement's snapshot is taken when it starts, so
 *    reads inside the locking statement would miss the jobs of the admission it waited for
 *    (read-state.ts).
 * 3. The planner decides every submission.
 * 4. Batch rows, job rows and reservations are written, then what they bring about in billing
 *    (billing/triggers.ts: low-credit and spend-cap alerts, auto-recharges); the claims of
 *    refused submissions are dropped (the key stays free, as if the request had never been
 *    made), and claims answered by other work are pointed at it.
 * After commit, the new queued jobs' queue entries are added (enqueueAfterCommit); nobody waits
 * for that: the submissions are answered once the group has committed.
 *
 * GroupAdmissions (below) is the admission service every entry point submits to: createJob,
 * createBatch and the schedule runs reach it as `services.admissions`.
 */

/** What a submission came to. */
export type Admitted =
  | { kind: 'job'; job: JobRow; deduplicated: boolean; idempotentReplay: boolean }
  | { kind: 'batch'; batch: BatchRow; jobs: JobRow[]; idempotentReplay: boolean };

/** A submission that must wait for the next group (its key is claimed by an earlier one of this group). */
export const NEXT_GROUP = Symbol('next group');
export type GroupOutcome = Admitted | typeof NEXT_GROUP;

/** Admits submissions: each is answered exactly as it would be alone, in submission order. */
export interface Admissions {
  admit(submission: Submission): Promise<Admitted>;
}

/**
 * The process's admission service: submissions of the same moment share one transaction
 * (admitGroup), through a group commit bounded as a request path is (past its bounds a
 * submission is refused with a 503 rather than queued without end). Built once per process by
 * packages/runtime.
 */
export class GroupAdmissions implements Admissions {
  private readonly group: GroupCommit<Submission, GroupOutcome>;

  constructor(resources: Resources) {
    this.group = new GroupCommit((items) => admitGroup(resources, items), { maxBatch: 64, ...REQUEST_PATH_BOUNDS });
  }

  async admit(submission: Submission): Promise<Admitted> {
    for (;;) {
      const outcome = await this.group.submit(submission);
      if (outcome !== NEXT_GROUP) return outcome;
    }
  }
}

/**
 * The flush of one admission group. When Postgres refuses its data (a data exception or
 * constraint violation), each submission is tried again alone, so a submission it refuses fails
 * only itself. Any other failure (database unreachable) is every submission's answer.
 */
export async function admitGroup(services: Resources, items: Submission[]): Promise<FlushResult<GroupOutcome>> {
  let results: FlushResult<GroupOutcome>;
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
  void enqueueAfterCommit(services, queueEntriesOf(results));
  for (const r of results) {
    if (r === NEXT_GROUP || r instanceof Error || r.idempotentReplay || (r.kind === 'job' && r.deduplicated)) continue;
    const jobs = r.kind === 'job' ? [r.job] : r.jobs;
    recordJobsAdmitted(jobs[0].platform, jobs[0].operation, jobs.length);
  }
  return results;
}

/**
 * The queue entries of the new queued jobs' first attempts, at their priority: single jobs in
 * the shared entries their rows name, batch children each in its own.
 */
function queueEntriesOf(results: FlushResult<GroupOutcome>): EnqueueRequest[] {
  const entries: EnqueueRequest[] = [];
  for (const r of results) {
    if (r === NEXT_GROUP || r instanceof Error || r.idempotentReplay) continue;
    const fresh = r.kind === 'job' ? (r.deduplicated ? [] : [r.job]) : r.jobs;
    for (const job of fresh) {
      if (job.status === 'queued')
        entries.push({
          jobId: job.id,
          attempt: job.attempts + 1,
          batchChild: job.batch_id !== null,
          entry: job.queue_entry,
          priority: job.queue_priority,
        });
    }
  }
  return entries;
}

/** One transaction for the given submissions, retried when Postgres picks it as a deadlock victim. */
function admitTogether(services: Resources, items: Submission[]): Promise<FlushResult<GroupOutcome>> {
  return retryDeadlocks(services.log, 'group admission', () =>
    services.db.transaction().execute((tx) => admitInTransaction(services, tx, items)),
  );
}

function claimOf(s: Submission, now: Date): IdempotencyClaim {
  return {
    workspaceId: s.tenant.workspace.id,
    endpoint: s.idempotency!.endpoint,
    key: s.idempotency!.key,
    requestHash: s.idempotency!.requestHash,
    resourceType: s.batchId === null ? 'job' : 'batch',
    resourceId: s.batchId ?? s.jobIds[0],
    now,
  };
}

/** Work an idempotency record names, loaded for a replay. */
interface Replayable {
  jobs: Map<string, JobRow>;
  batches: Map<string, { batch: BatchRow; jobs: JobRow[] }>;
}

async function admitInTransaction(services: Resources, tx: Tx, items: Submission[]): Promise<FlushResult<GroupOutcome>> {
  const now = services.clock.now();
  const { keys, claims, replayable } = await claimKeys(tx, items, now);
  const state = await readAdmissionState(services, tx, items, keys, now);
  const plan = planAdmission(items, state, now, {
    maxAttempts: services.config.jobMaxAttempts,
    useCache: services.config.cacheTtlSeconds > 0,
    deployment: services.config.deploymentId,
  });

  // The new single queued jobs travel in shared queue entries; each row records the entry that
  // carries its first attempt (the reconciler re-adds a lost one's jobs each in its own entry).
  const singles = plan.decisions.flatMap((d, i) => (d.kind === 'admitted' && items[i].batchId === null ? d.rows : []));
  const rowById = new Map(singles.map((row) => [row.id, row]));
  for (const entry of planEntries(
    singles.map((row) => row.id),
    1,
  )) {
    for (const id of entry.jobIds) rowById.get(id)!.queue_entry = sharedEntry(entry);
  }

  const batches = plan.decisions.flatMap((d, i) => (d.kind === 'admitted' && items[i].batchId !== null ? [batchRow(items[i], now)] : []));
  const insertedBatches = batches.length > 0 ? await tx.insertInto('batches').values(batches).returningAll().execute() : [];
  const newRows = plan.decisions.flatMap((d): NewJob[] => (d.kind === 'admitted' ? d.rows : d.kind === 'cached' ? [d.row] : []));
  const inserted = await queueJobs(tx, now, newRows, plan.reservations, plan.balances);
  if (plan.capsReached.length > 0 || items.some((s) => watchesBalance(s.tenant.workspace)))
    await afterAdmission(tx, services.config, now, items, state, plan);

  // Keys this transaction answers for: claimed now, or held by a record of the same body whose work is gone.
  const ours = (i: number) => {
    const key = keys[i];
    return key.kind === 'claimed' || (key.kind === 'held' && !key.exists && key.requestHash === items[i].idempotency?.requestHash);
  };
  const dropped = plan.decisions.flatMap((d, i) => (d.kind === 'refused' && ours(i) ? [claims.get(i)!] : []));
  const pointed = plan.decisions.flatMap((d, i) => {
    if (!ours(i)) return [];
    if (d.kind === 'deduplicated') return [{ scope: claims.get(i)!, resourceId: d.jobId }];
    if (keys[i].kind === 'held' && (d.kind === 'admitted' || d.kind === 'cached'))
      return [{ scope: claims.get(i)!, resourceId: claimOf(items[i], now).resourceId }];
    return [];
  });
  if (dropped.length > 0) await dropClaims(tx, dropped);
  if (pointed.length > 0) await pointClaims(tx, pointed);

  const jobById = new Map(inserted.map((job) => [job.id, job]));
  const batchById = new Map(insertedBatches.map((batch) => [batch.id, batch]));
  return plan.decisions.map((d, i) => answer(d, items[i], jobById, batchById, replayable));
}

function answer(
  d: Decision,
  s: Submission,
  jobById: Map<string, JobRow>,
  batchById: Map<string, BatchRow>,
  replayable: Replayable,
): GroupOutcome | Error {
  switch (d.kind) {
    case 'next_group':
      return NEXT_GROUP;
    case 'refused':
      return d.error;
    case 'replay': {
      if (s.batchId === null) return { kind: 'job', job: replayable.jobs.get(d.resourceId)!, deduplicated: false, idempotentReplay: true };
      const { batch, jobs } = replayable.batches.get(d.resourceId)!;
      return { kind: 'batch', batch, jobs, idempotentReplay: true };
    }
    case 'deduplicated':
      return { kind: 'job', job: d.job ?? jobById.get(d.jobId)!, deduplicated: true, idempotentReplay: false };
    case 'cached':
      return { kind: 'job', job: jobById.get(d.row.id)!, deduplicated: false, idempotentReplay: false };
    case 'admitted': {
      const jobs = d.rows.map((row) => jobById.get(row.id)!);
      if (s.batchId === null) return { kind: 'job', job: jobs[0], deduplicated: false, idempotentReplay: false };
      return { kind: 'batch', batch: batchById.get(s.batchId)!, jobs, idempotentReplay: false };
    }
  }
}

function batchRow(s: Submission, now: Date) {
  return {
    id: s.batchId!,
    workspace_id: s.tenant.workspace.id,
    platform: s.recipe.platform,
    operation: s.recipe.operation,
    requested_limit: s.recipe.limit,
    include_posts: s.recipe.includePosts,
    target_count: s.targets.length,
    schedule_id: s.scheduleId,
    ...deliveryColumns(s.delivery, now),
    created_at: now,
  };
}

/**
 * Step 1: claims the submissions' keys and reads what the keys already held name. A key that
 * two submissions of the group carry is claimed by the first; the second waits for the next
 * group, where it finds the first one's committed record (a replay), or takes the key if the
 * first was refused, exactly as a concurrent request waiting on the key's row would.
 */
async function claimKeys(
  tx: Tx,
  items: Submission[],
  now: Date,
): Promise<{ keys: KeyState[]; claims: Map<number, IdempotencyClaim>; replayable: Replayable }> {
  const keys: KeyState[] = items.map(() => ({ kind: 'none' }));
  const claims = new Map<number, IdempotencyClaim>();
  const claimers = new Map<string, number>();
  const replayable: Replayable = { jobs: new Map(), batches: new Map() };
  items.forEach((s, i) => {
    if (!s.idempotency) return;
    const claim = claimOf(s, now);
    claims.set(i, claim);
    const id = scopeId(claim);
    if (claimers.has(id)) keys[i] = { kind: 'contended' };
    else claimers.set(id, i);
  });
  if (claimers.size === 0) return { keys, claims, replayable };

  const ordered = [...claimers.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, i]) => i);
  const won = await insertClaims(
    tx,
    ordered.map((i) => claims.get(i)!),
  );
  const taken = ordered.filter((i) => !won.has(scopeId(claims.get(i)!)));
  for (const i of ordered) if (won.has(scopeId(claims.get(i)!))) keys[i] = { kind: 'claimed' };
  if (taken.length === 0) return { keys, claims, replayable };

  const records = await findClaimRecords(
    tx,
    taken.map((i) => claims.get(i)!),
  );
  const jobIds: string[] = [];
  const batchIds: string[] = [];
  for (const i of taken) {
    const record = records.get(scopeId(claims.get(i)!));
    if (record && record.request_hash === claims.get(i)!.requestHash)
      (items[i].batchId === null ? jobIds : batchIds).push(record.resource_id);
  }
  if (jobIds.length > 0) {
    for (const job of await tx.selectFrom('jobs').selectAll().where('id', 'in', jobIds).execute()) replayable.jobs.set(job.id, job);
  }
  if (batchIds.length > 0) {
    const [batches, children] = await sendTogether(
      tx,
      tx.selectFrom('batches').selectAll().where('id', 'in', batchIds).compile(),
      tx.selectFrom('jobs').selectAll().where('batch_id', 'in', batchIds).orderBy('batch_position').compile(),
    );
    for (const batch of batches) replayable.batches.set(batch.id, { batch, jobs: children.filter((job) => job.batch_id === batch.id) });
  }
  for (const i of taken) {
    const record = records.get(scopeId(claims.get(i)!));
    if (!record) {
      keys[i] = { kind: 'vanished' };
      continue;
    }
    const workspaceId = items[i].tenant.workspace.id;
    const work = items[i].batchId === null ? replayable.jobs.get(record.resource_id) : replayable.batches.get(record.resource_id)?.batch;
    keys[i] = {
      kind: 'held',
      requestHash: record.request_hash,
      resourceId: record.resource_id,
      exists: work?.workspace_id === workspaceId,
    };
  }
  return { keys, claims, replayable };
}
