import { sql } from 'kysely';
import type { AppConfig, CreditPack } from '@sdx/config';
import { jsonRows, type Tx, type WorkspaceRow } from '@sdx/db';
import type { AdmissionPlan, AdmissionState, CapReached, Submission } from '../admission/plan';
import { availableOf, type Balance } from '../credits/balances';
import type { ClaimedReservation } from '../credits/postings';
import { periodStartOf } from '../time';
import { type BillingAlert, recordBillingAlerts } from './alerts';
import { queueAutoRecharges } from './recharge';

/**
 * What moving credits brings about in billing (extensions-2.md 1), decided from the balances
 * before and after the change, under the balance locks of the change's own transaction:
 * - `billing.credits_low` once each time the available credits cross `low_credits_threshold`
 *   downward (a crossing, so no flag is kept: the next alert needs the credits back above it);
 * - an auto-recharge queued when a settlement that spent credits leaves the available credits
 *   below the auto-recharge threshold (billing/recharge.ts keeps one in flight per workspace).
 *   Never a reservation (extensions-3.md 1): a key that reserves and cancels spends nothing, so
 *   it must charge nothing;
 * - `billing.spend_cap_reached` once per scope and month, when a cap first stops a submission
 *   (the planner decides it; the flags are written here).
 */

/** The billing settings of a workspace, as the tenant carries them. */
export type BillingSettings = Pick<
  WorkspaceRow,
  'id' | 'monthly_quota' | 'low_credits_threshold' | 'auto_recharge_enabled' | 'auto_recharge_threshold' | 'auto_recharge_pack_id'
>;

/** Whether a reservation's balance change is watched (a low-credits threshold): only then does a reservation call afterAdmission. Auto-recharge watches settlements only. */
export function watchesBalance(workspace: Pick<BillingSettings, 'low_credits_threshold' | 'auto_recharge_enabled'>): boolean {
  return workspace.low_credits_threshold !== null;
}

/** The `billing.credits_low` alert when the available credits crossed the threshold downward between `before` and `after`. */
export function lowCreditsCrossed(
  settings: Pick<BillingSettings, 'id' | 'monthly_quota' | 'low_credits_threshold'>,
  before: Balance,
  after: Balance,
  now: Date,
): BillingAlert | null {
  return lowCreditsBetween(settings, availableOf(before, settings, now).total, availableOf(after, settings, now).total);
}

/** The `billing.credits_low` alert when the available credits went from `was` to `is` across the threshold, downward. */
export function lowCreditsBetween(
  settings: Pick<BillingSettings, 'id' | 'low_credits_threshold'>,
  was: number,
  is: number,
): BillingAlert | null {
  const threshold = settings.low_credits_threshold;
  if (threshold === null || !(was >= threshold && is < threshold)) return null;
  return {
    workspaceId: settings.id,
    type: 'billing.credits_low',
    data: {
      message: `Available credits fell to ${is}, below the alert threshold of ${threshold}.`,
      available_credits: is,
      low_credits_threshold: threshold,
      scope: null,
      key_id: null,
      cap: null,
      spent: null,
      reason: null,
    },
  };
}

/** The pack to recharge with when auto-recharge is on and the available credits are below its threshold; else null. */
export function rechargeDue(
  settings: { id: string; monthly_quota: number; threshold: number | null; packId: string | null },
  after: Balance,
  now: Date,
  packs: readonly CreditPack[],
): { workspaceId: string; pack: CreditPack } | null {
  if (settings.threshold === null) return null;
  const pack = packs.find((p) => p.id === settings.packId);
  if (!pack || availableOf(after, settings, now).total >= settings.threshold) return null;
  return { workspaceId: settings.id, pack };
}

function capAlert(reached: CapReached): BillingAlert {
  const whose = reached.scope === 'key' ? `API key ${reached.keyId}` : 'the workspace';
  return {
    workspaceId: reached.workspaceId,
    type: 'billing.spend_cap_reached',
    data: {
      message: `The monthly spend cap of ${whose} (${reached.cap} credits) stopped a request; ${reached.spent} credits are spent this month.`,
      available_credits: null,
      low_credits_threshold: null,
      scope: reached.scope,
      key_id: reached.keyId,
      cap: reached.cap,
      spent: reached.spent,
      reason: null,
    },
  };
}

/**
 * After an admission group's reservations are written, in its transaction: the caps' alert
 * flags and alerts, and low-credit alerts. Nothing to do (no statement) for workspaces without
 * a threshold or a cap that stopped a submission. No auto-recharge: only settlements charge.
 */
export async function afterAdmission(
  tx: Tx,
  config: AppConfig,
  now: Date,
  items: readonly Submission[],
  state: AdmissionState,
  plan: AdmissionPlan,
): Promise<void> {
  const settings = new Map(items.map((s) => [s.tenant.workspace.id, s.tenant.workspace as BillingSettings]));
  const alerts: BillingAlert[] = plan.capsReached.map(capAlert);
  for (const after of plan.balances) {
    const workspace = settings.get(after.workspace_id)!;
    const before = state.balances.get(after.workspace_id);
    const low = before ? lowCreditsCrossed(workspace, before, after, now) : null;
    if (low) alerts.push(low);
  }
  if (plan.capsReached.length > 0) await markCapsAlerted(tx, now, plan.capsReached);
  if (alerts.length > 0) await recordBillingAlerts(tx, config, now, alerts);
}

/**
 * After settlements are booked, in their transaction: the auto-recharges they leave due. Only a
 * settlement that spent credits (settled_credits > 0) counts: one that charged nothing (a job
 * that delivered nothing) moved no credits out of the workspace.
 */
export async function afterSettlements(
  tx: Tx,
  config: Pick<AppConfig, 'creditPacks'>,
  now: Date,
  reservations: readonly ClaimedReservation[],
  after: ReadonlyMap<string, Balance>,
): Promise<void> {
  const recharges = new Map<string, { workspaceId: string; pack: CreditPack }>();
  for (const r of reservations) {
    const balance = after.get(r.workspace_id);
    if (r.recharge_below === null || (r.settled_credits ?? 0) <= 0 || !balance || recharges.has(r.workspace_id)) continue;
    const due = rechargeDue(
      { id: r.workspace_id, monthly_quota: r.monthly_quota, threshold: r.recharge_below, packId: r.recharge_pack_id },
      balance,
      now,
      config.creditPacks,
    );
    if (due) recharges.set(r.workspace_id, due);
  }
  if (recharges.size > 0) await queueAutoRecharges(tx, now, [...recharges.values()]);
}

/** Records that each cap's scope was told this month: the workspace's balance row, or the key's spend row. */
async function markCapsAlerted(tx: Tx, now: Date, caps: readonly CapReached[]): Promise<void> {
  const workspaces = caps.filter((c) => c.scope === 'workspace').map((c) => c.workspaceId);
  const keys = caps.filter((c) => c.scope === 'key' && c.keyId !== null).map((c) => ({ key_id: c.keyId!, workspace_id: c.workspaceId }));
  if (workspaces.length > 0)
    await tx.updateTable('credit_balances').set({ cap_alerted: true }).where('workspace_id', 'in', workspaces).execute();
  if (keys.length === 0) return;
  await sql`
    insert into api_key_spend (key_id, workspace_id, period_start, spent, cap_alerted)
    select k.key_id, k.workspace_id, ${periodStartOf(now)}::date, 0, true from ${jsonRows(keys, 'key_id text, workspace_id text')} as k
    on conflict (key_id) do update
      set cap_alerted = true,
          spent = case when api_key_spend.period_start = excluded.period_start then api_key_spend.spent else 0 end,
          period_start = excluded.period_start
  `.execute(tx);
}
