import type { Tx, WorkspaceRow } from '@sdx/db';
import { periodStartOf } from '../time';
import { allowanceEntry, type Balance, lockBalances } from './balances';

/** Balance rows opened and credits granted (part of the money module, credits/). */

export async function openBalance(tx: Tx, workspace: WorkspaceRow, now: Date): Promise<void> {
  const period = periodStartOf(now);
  await tx.insertInto('credit_balances').values({ workspace_id: workspace.id, period_start: period }).execute();
  await tx
    .insertInto('credit_ledger')
    .values(allowanceEntry(workspace.id, workspace.monthly_quota, period))
    .execute();
}

export interface GrantRequest {
  credits: number;
  kind: 'purchased' | 'promotional';
  expiresAt?: Date | null;
  note?: string;
}

/** Adds purchased or promotional credits; they can be spent at once. */
export async function grantCredits(tx: Tx, workspace: WorkspaceRow, now: Date, grant: GrantRequest): Promise<void> {
  if (!Number.isInteger(grant.credits) || grant.credits <= 0) throw new Error('credits must be a positive integer');
  const balance = await lockBalance(tx, workspace.id, now, workspace.monthly_quota);
  const promo = grant.kind === 'promotional';
  await tx
    .insertInto('credit_ledger')
    .values({
      workspace_id: workspace.id,
      entry_type: 'grant',
      bucket: grant.kind,
      credits: grant.credits,
      promo_credits: promo ? grant.credits : 0,
      purchased_credits: promo ? 0 : grant.credits,
      period_start: balance.period_start,
      note: grant.note ?? null,
    })
    .execute();
  await tx
    .updateTable('credit_balances')
    .set((eb) =>
      promo
        ? {
            promo_balance: eb('promo_balance', '+', grant.credits),
            // One promotional pool: a new grant's expiry (if any) applies to the pool.
            promo_expires_at: grant.expiresAt ?? balance.promo_expires_at,
            updated_at: now,
          }
        : {
            purchased_balance: eb('purchased_balance', '+', grant.credits),
            lifetime_purchased: eb('lifetime_purchased', '+', grant.credits),
            updated_at: now,
          },
    )
    .where('workspace_id', '=', workspace.id)
    .execute();
}

/** lockBalances for one workspace. */
export async function lockBalance(tx: Tx, workspaceId: string, now: Date, quota: number): Promise<Balance> {
  const balance = (await lockBalances(tx, [{ id: workspaceId, monthly_quota: quota }], now)).get(workspaceId);
  if (!balance) throw new Error(`workspace ${workspaceId} has no balance row`);
  return balance;
}

/**
 * Raises a workspace's monthly plan allowance to `quota` from this period on (a personal
 * workspace whose email was just verified receives NEW_WORKSPACE_CREDITS this way): the
 * allowance ledger entry of the current period grows by the difference.
 */
export async function raiseAllowance(tx: Tx, workspace: WorkspaceRow, quota: number, now: Date): Promise<void> {
  if (quota <= workspace.monthly_quota) return;
  const balance = await lockBalance(tx, workspace.id, now, workspace.monthly_quota);
  await tx.updateTable('workspaces').set({ monthly_quota: quota }).where('id', '=', workspace.id).execute();
  await tx
    .insertInto('credit_ledger')
    .values({
      ...allowanceEntry(workspace.id, quota - workspace.monthly_quota, balance.period_start),
      note: 'plan allowance from the verified email',
    })
    .execute();
}
