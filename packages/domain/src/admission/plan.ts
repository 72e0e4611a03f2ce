import type { JobRow, NewJob, WorkspaceRow } from '@sdx/db';
import { type Balance, type PlannedReservation, planReservations } from '../credits/balances';
import type { Tenant } from '../resources';
import { ApiError } from '../errors';
import type { Recipe } from '../jobs/recipe';
import { type AdmitTarget, cachedJobRow, queuedJobRow } from './job-rows';

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
 * - otherwise it must fit under the active-job cap (429), the month's spend caps of its key and
 *   of its workspace (402 spend_cap_reached) and the credits left (402), and is admitted with
 *   its reservation. A batch is all or nothing, and is never deduplicated or served from the
 *   cache: each target is fresh work. Cached and deduplicated answers reserve nothing, so no cap
 *   stops them.
 */

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
  /**
   * The destination its export is delivered to, and the object key (a single job's, or the
   * batch's: its children carry none). A job with one is never deduplicated onto a twin (whose
   * delivery is its own); a cached job is new, so it delivers.
   */
  delivery?: { destinationId: string; key: string } | null;
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
  /** By workspace, then request key: the queued or running twin, else the latest fresh completed job. */
  reusable: Map<string, Map<string, JobRow>>;
  /** Per submission, in order. */
  keys: KeyState[];
  /** The submissions' API keys: their monthly cap and this month's spend. */
  keySpend: Map<string, KeySpend>;
}

/** An API key's monthly cap and what it reserved or spent this month. */
export interface KeySpend {
  cap: number | null;
  spent: number;
  /** `billing.spend_cap_reached` was sent for it this month. */
  alerted: boolean;
}

/** A submission stopped by a spend cap whose scope had not been told this month (billing.spend_cap_reached). */
export interface CapReached {
  workspaceId: string;
  scope: 'key' | 'workspace';
  keyId: string | null;
  cap: number;
  spent: number;
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
  /** Caps that stopped a submission for the first time this month, once per scope. */
  capsReached: CapReached[];
}

export function planAdmission(submissions: readonly Submission[], state: AdmissionState, now: Date, rules: AdmissionRules): AdmissionPlan {
  const balances = new Map(state.balances);
  const active = new Map(state.active);
  const reservations: PlannedReservation[] = [];
  const reserved = new Set<string>();
  /** Jobs admitted in this plan, by workspace and request key: a later identical submission is deduplicated onto them. */
  const admittedTwins = new Map<string, string>();
  const twinOf = (workspaceId: string, key: string) => `${workspaceId}\u0000${key}`;
  const keySpend = new Map([...state.keySpend].map(([id, spend]) => [id, { ...spend }]));
  const capsReached: CapReached[] = [];

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
    const key0 = s.targets[0].key;
    if (s.batchId === null && !s.newOnly) {
      const twin = s.delivery ? undefined : admittedTwins.get(twinOf(workspace.id, key0));
      const found = state.reusable.get(workspace.id)?.get(key0);
      if (twin !== undefined) return { kind: 'deduplicated', jobId: twin, job: null };
      const active = found !== undefined && (found.status === 'queued' || found.status === 'running');
      if (found && active && !s.delivery) return { kind: 'deduplicated', jobId: found.id, job: found };
      if (found && !active && rules.useCache && !s.skipCache) {
        return {
          kind: 'cached',
          row: cachedJobRow(workspace.id, now, found, s.targets[0], s.jobIds[0], {
            maxAttempts: rules.maxAttempts,
            scheduleId: s.scheduleId,
            requestId: s.requestId,
            delivery: s.delivery,
          }),
        };
      }
    }

    const count = active.get(workspace.id) ?? 0;
    const n = s.targets.length;
    if (count + n > workspace.max_active_jobs) {
      return {
        kind: 'refused',
        error: new ApiError(
          'concurrent_job_limit_exceeded',
          `This workspace has ${count} active jobs; its limit is ${workspace.max_active_jobs}.`,
          {
            active: count,
            limit: workspace.max_active_jobs,
            requested: n,
          },
        ),
      };
    }
    const balance = balances.get(workspace.id);
    if (!balance) throw new Error(`the balance of workspace ${workspace.id} was not read`);
    const required = s.recipe.maxCredits * n;
    const keySpent = s.tenant.keyId === null ? undefined : keySpend.get(s.tenant.keyId);
    const capped = spendCapReached(s.tenant.keyId, keySpent, workspace, balance, required);
    if (capped) {
      const alerted = capped.scope === 'key' ? keySpent!.alerted : balance.cap_alerted;
      if (!alerted) {
        capsReached.push({
          workspaceId: workspace.id,
          scope: capped.scope,
          keyId: capped.scope === 'key' ? s.tenant.keyId : null,
          cap: capped.cap,
          spent: capped.spent,
        });
        if (capped.scope === 'key') keySpent!.alerted = true;
        else balances.set(workspace.id, { ...balance, cap_alerted: true });
      }
      return { kind: 'refused', error: capped.error };
    }
    // The whole submission must fit: a 402 reports what all of it requires against what is available.
    const reserve = planReservations(
      workspace,
      balance,
      now,
      s.jobIds.map((jobId) => ({ jobId, credits: s.recipe.maxCredits, units: s.recipe.maxUnits, keyId: s.tenant.keyId })),
    );
    if ('refused' in reserve) return { kind: 'refused', error: reserve.refused };
    if (keySpent) keySpent.spent += required;
    reservations.push(...reserve.planned);
    const rows = s.targets.map((target, index) =>
      queuedJobRow(workspace.id, now, s.recipe, target, s.jobIds[index], {
        maxAttempts: rules.maxAttempts,
        batchId: s.batchId,
        batchPosition: s.batchId === null ? null : index,
        scheduleId: s.scheduleId,
        newOnly: s.newOnly,
        requestId: s.requestId,
        delivery: s.batchId === null ? s.delivery : null,
        deployment: rules.deployment ?? null,
        // Round robin across workspaces: the k-th active job of a workspace goes with the k-th of the others.
        priority: count + index + 1,
      }),
    );
    balances.set(workspace.id, reserve.balance);
    reserved.add(workspace.id);
    active.set(workspace.id, count + n);
    if (s.batchId === null && !s.newOnly) admittedTwins.set(twinOf(workspace.id, key0), s.jobIds[0]);
    return { kind: 'admitted', rows, reserved: s.recipe.maxCredits * n };
  });

  return { decisions, reservations, balances: [...reserved].map((id) => balances.get(id)!), capsReached };
}

/**
 * The spend caps (extensions-2.md 1): a reservation may not take the month's spend of the key
 * that submits it, then of its workspace, past that one's `monthly_credit_cap`. Reaching a cap
 * exactly is allowed. `spent` in the 402 is the month's spend before this request.
 */
export function spendCapReached(
  keyId: string | null,
  key: KeySpend | undefined,
  workspace: Pick<WorkspaceRow, 'monthly_credit_cap'>,
  balance: Pick<Balance, 'month_spent'>,
  required: number,
): { scope: 'key' | 'workspace'; cap: number; spent: number; error: ApiError } | null {
  const refuse = (scope: 'key' | 'workspace', cap: number, spent: number) => ({
    scope,
    cap,
    spent,
    error: new ApiError(
      'spend_cap_reached',
      `This request needs ${required} credits; ${scope === 'key' ? `the API key's` : `the workspace's`} monthly cap of ${cap} has ${Math.max(0, cap - spent)} left. ${
        scope === 'key'
          ? `An admin of the workspace changes the key's cap under "Spend caps" on the console's Billing page, or with PATCH /v1/keys/${keyId ?? '{key_id}'} (monthly_credit_cap).`
          : `An admin of the workspace changes it under "Spend caps" on the console's Billing page, or with PUT /v1/billing/limits (monthly_credit_cap).`
      }`,
      { scope, cap, spent, required, ...(scope === 'key' ? { key_id: keyId } : {}) },
    ),
  });
  if (key && key.cap !== null && key.spent + required > key.cap) return refuse('key', key.cap, key.spent);
  const cap = workspace.monthly_credit_cap;
  if (cap !== null && balance.month_spent + required > cap) return refuse('workspace', cap, balance.month_spent);
  return null;
}
