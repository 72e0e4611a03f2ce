import type { JobRow, NewJob } from '@sdx/db';
import { type Balance, availableOf, insufficientCredits, type PlannedReservation, planReservation } from '../credits/credits';
import type { Tenant } from '../context';
import { ApiError } from '../errors';
import { type Recipe, requestKey } from '../jobs/recipe';
import { cachedJobRow, queuedJobRow } from '../jobs/state';

/**
 * The admission planner: a pure function that decides what each submission of a group comes to,
 * from what the admission read under the workspaces' balance locks. No I/O: the caller reads
 * the state (admit.ts), asks the planner, and writes what it planned. Single jobs, batches,
 * schedule dispatches and quotes all go through it, so they cannot disagree.
 *
 * Submissions are decided in order, each seeing the reservations, active jobs and new jobs of
 * the ones before it:
 * - idempotency: a key held by another request with a different body is a conflict (409); with
 *   the same body, a replay of the work it names; a key claimed by an earlier submission of the
 *   same group waits for the next group;
 * - a single job is deduplicated onto a queued or running twin (or one admitted earlier in the
 *   group), else served from a fresh completed twin (the cache) unless the caller skips it;
 * - otherwise it must fit under the active-job cap (429) and the credits left (402), and is
 *   admitted with its reservation. A batch is all or nothing, and is never deduplicated or
 *   served from the cache: each target is fresh work.
 */

export interface AdmitTarget {
  target: string;
  normalized: string;
}

/** One checked submission: a single job (one target) or a batch (several, with its batch ID). */
export interface Submission {
  tenant: Tenant;
  recipe: Recipe;
  targets: AdmitTarget[];
  /** The IDs the new jobs get, one per target (pre-allocated so an idempotency record can name them). */
  jobIds: string[];
  batchId: string | null;
  idempotency: { endpoint: string; key: string; requestHash: string } | null;
  skipCache: boolean;
  scheduleId: string | null;
  /**
   * An occurrence of a new_only schedule: its jobs deliver only what the schedule has not
   * delivered yet, so they are fresh work (never deduplicated or served from the cache) and
   * their request keys are the schedule's own (no other request reuses their filtered results).
   */
  newOnly: boolean;
  /** The request that submitted it (X-Request-ID, or a schedule run's ID), recorded on its jobs. */
  requestId: string | null;
}

/** What the submission's Idempotency-Key found, read before planning. */
export type KeyState =
  | { kind: 'none' }
  /** Claimed by this transaction: the key was free. */
  | { kind: 'claimed' }
  /** Claimed by an earlier submission of the same group. */
  | { kind: 'contended' }
  /** Held by a record that vanished before it was read (purged): try again. */
  | { kind: 'vanished' }
  /** Held by a live record; `exists` tells whether the work it names exists in this workspace. */
  | { kind: 'held'; requestHash: string; resourceId: string; exists: boolean };

export interface AdmissionState {
  balances: Map<string, Balance>;
  /** Active (queued or running) jobs per workspace. */
  active: Map<string, number>;
  /** By reuseKey: the queued or running twin, else the latest fresh completed job. */
  reusable: Map<string, JobRow>;
  /** Per submission, in order. */
  keys: KeyState[];
}

export interface AdmissionRules {
  maxAttempts: number;
  /** Whether fresh completed results may be reused (CACHE_TTL_SECONDS > 0). */
  useCache: boolean;
  /** The deployment recorded on admitted jobs (its reconciler recovers them); null in tests of the planner. */
  deployment?: string | null;
}

export type Decision =
  | { kind: 'next_group' }
  | { kind: 'replay'; resourceId: string }
  | { kind: 'refused'; error: ApiError }
  | { kind: 'deduplicated'; jobId: string; job: JobRow | null }
  | { kind: 'cached'; row: NewJob }
  | { kind: 'admitted'; rows: NewJob[]; reserved: number };

export interface AdmissionPlan {
  decisions: Decision[];
  /** The reservations of the admitted jobs, and the balances after them (of the workspaces that reserved). */
  reservations: PlannedReservation[];
  balances: Balance[];
}

export function reuseKey(workspaceId: string, key: string): string {
  return `${workspaceId}\u0000${key}`;
}

/** The request keys of a submission's targets (cache and deduplication identity). */
export function requestKeys(s: Pick<Submission, 'recipe' | 'targets' | 'newOnly' | 'scheduleId'>): string[] {
  return s.targets.map((t) => requestKey(s.recipe, t.normalized, s.newOnly ? `new_only:${s.scheduleId}` : null));
}

export function planAdmission(submissions: readonly Submission[], state: AdmissionState, now: Date, rules: AdmissionRules): AdmissionPlan {
  const balances = new Map(state.balances);
  const active = new Map(state.active);
  const reservations: PlannedReservation[] = [];
  const reserved = new Set<string>();
  /** Jobs admitted in this plan by request: a later identical submission is deduplicated onto them. */
  const admittedTwins = new Map<string, string>();

  const decisions = submissions.map((s, i): Decision => {
    const key = state.keys[i] ?? { kind: 'none' };
    if (key.kind === 'contended' || key.kind === 'vanished') return { kind: 'next_group' };
    if (key.kind === 'held') {
      if (key.requestHash !== s.idempotency?.requestHash) {
        return {
          kind: 'refused',
          error: new ApiError('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body.', {
            idempotency_key: s.idempotency?.key,
          }),
        };
      }
      // The same body replays the work the record names; if that work is gone, it is admitted afresh.
      if (key.exists) return { kind: 'replay', resourceId: key.resourceId };
    }

    const workspace = s.tenant.workspace;
    const keys = requestKeys(s);
    if (s.batchId === null && !s.newOnly) {
      const twinKey = reuseKey(workspace.id, keys[0]!);
      const twin = admittedTwins.get(twinKey);
      const found = state.reusable.get(twinKey);
      if (twin !== undefined) return { kind: 'deduplicated', jobId: twin, job: null };
      if (found && (found.status === 'queued' || found.status === 'running')) return { kind: 'deduplicated', jobId: found.id, job: found };
      if (found && rules.useCache && !s.skipCache) {
        return {
          kind: 'cached',
          row: cachedJobRow(workspace.id, now, found, s.targets[0]!, keys[0]!, s.jobIds[0]!, { maxAttempts: rules.maxAttempts, scheduleId: s.scheduleId, requestId: s.requestId }),
        };
      }
    }

    const count = active.get(workspace.id) ?? 0;
    const n = s.targets.length;
    if (count + n > workspace.max_active_jobs) {
      return {
        kind: 'refused',
        error: new ApiError('concurrent_job_limit_exceeded', `This workspace has ${count} active jobs; its limit is ${workspace.max_active_jobs}.`, {
          active: count,
          limit: workspace.max_active_jobs,
          requested: n,
        }),
      };
    }
    let balance = balances.get(workspace.id);
    if (!balance) throw new Error(`the balance of workspace ${workspace.id} was not read`);
    // The whole submission must fit: a 402 reports what all of it requires against what is available.
    const required = s.recipe.maxCredits * n;
    const available = availableOf(balance, workspace, now);
    if (required > available.total) return { kind: 'refused', error: insufficientCredits(balance, available, required) };

    const rows: NewJob[] = [];
    s.targets.forEach((target, index) => {
      const id = s.jobIds[index]!;
      const next = planReservation(workspace, balance!, now, { jobId: id, credits: s.recipe.maxCredits, units: s.recipe.maxUnits });
      balance = next.balance;
      reservations.push(next.planned);
      rows.push(
        queuedJobRow(workspace.id, now, s.recipe, target, keys[index]!, id, {
          maxAttempts: rules.maxAttempts,
          batchId: s.batchId,
          batchPosition: s.batchId === null ? null : index,
          scheduleId: s.scheduleId,
          newOnly: s.newOnly,
          requestId: s.requestId,
          deployment: rules.deployment ?? null,
          // Round robin across workspaces: the k-th active job of a workspace goes with the k-th of the others.
          priority: count + index + 1,
        }),
      );
    });
    balances.set(workspace.id, balance);
    reserved.add(workspace.id);
    active.set(workspace.id, count + n);
    if (s.batchId === null && !s.newOnly) admittedTwins.set(reuseKey(workspace.id, keys[0]!), s.jobIds[0]!);
    return { kind: 'admitted', rows, reserved: required };
  });

  return { decisions, reservations, balances: [...reserved].map((id) => balances.get(id)!) };
}
