import { type AppConfig, FREE_PLAN_ID, type Plan } from '@sdx/config';
import type { components } from '@sdx/contract';
import type { Executor, Tx } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import { lockBalance } from '../credits/grants';
import { allowanceEntry } from '../credits/balances';
import { ApiError } from '../errors';

/**
 * Monthly plans (extensions-3.md 2): PLANS as the API renders them, and the one write that puts
 * a workspace on a plan. A plan sets the workspace's `monthly_quota` (the plan allowance of each
 * UTC calendar month, from the current month on: the current month's allowance entry grows or
 * shrinks by the difference, as a verified email's raise does) and the limits it names; a limit
 * it does not name stays as the workspace has it. Every request reads the workspace afresh, so a
 * plan's quota and limits hold from the next request.
 */
export type { Plan };
export type PlanView = components['schemas']['Plan'];

export function renderPlan(plan: Plan): PlanView {
  return {
    id: plan.id,
    name: plan.name,
    monthly_credits: plan.monthly_credits,
    amount: plan.amount,
    currency: plan.currency,
    limits: { ...plan.limits },
  };
}

export function findPlan(config: Pick<AppConfig, 'plans'>, planId: string | null | undefined): Plan | undefined {
  return planId ? config.plans.find((p) => p.id === planId) : undefined;
}

/** The free plan (always in PLANS). */
export function freePlan(config: Pick<AppConfig, 'plans'>): Plan {
  return findPlan(config, FREE_PLAN_ID)!;
}

/** The plan a workspace is on; a plan no longer in PLANS reads as free (its quota stays as it was set). */
export function planOf(config: Pick<AppConfig, 'plans'>, planId: string): Plan {
  return findPlan(config, planId) ?? freePlan(config);
}

/** A plan one can subscribe to (any but free), or 422 `unknown_plan`. */
export function paidPlanOrThrow(config: Pick<AppConfig, 'plans'>, planId: string): Plan {
  const plan = findPlan(config, planId);
  if (!plan || plan.id === FREE_PLAN_ID) throw new ApiError('unknown_plan', `No paid plan has the ID ${planId}.`);
  return plan;
}

/** Which of two plans costs more per month (an upgrade): by amount, then by credits. */
export function isUpgrade(from: Plan, to: Plan): boolean {
  if (to.amount !== from.amount) return to.amount > from.amount;
  return to.monthly_credits > from.monthly_credits;
}

export interface PlanChange {
  workspaceId: string;
  previousPlanId: string;
  planId: string;
  monthlyQuota: number;
}

/**
 * Puts the workspace on `plan` from now on: plan_id, monthly_quota (with the current month's
 * allowance entry moved by the difference, under the balance lock) and the limits the plan
 * names; `invoiceAt` (the paid invoice that says so) is kept so an older invoice's late event
 * cannot undo it. The workspace row is locked first, so plan changes of one workspace follow
 * each other. Null when the workspace is already on that plan at that quota (nothing written
 * but the invoice time). Audited as `billing.plan_changed`.
 */
export async function applyPlan(
  tx: Tx,
  workspaceId: string,
  plan: Plan,
  now: Date,
  invoiceAt: Date | null,
  actor: Actor,
): Promise<PlanChange | null> {
  const workspace = await tx
    .selectFrom('workspaces')
    .select(['id', 'monthly_quota'])
    .where('id', '=', workspaceId)
    .forUpdate()
    .executeTakeFirst();
  if (!workspace) return null;
  const current = await readPlanRow(tx, workspaceId);
  const previousPlanId = current?.plan_id ?? FREE_PLAN_ID;
  const planAt = invoiceAt ?? current?.plan_invoice_at ?? null;
  await tx
    .insertInto('workspace_plans')
    .values({ workspace_id: workspaceId, plan_id: plan.id, plan_invoice_at: planAt, updated_at: now })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ plan_id: plan.id, plan_invoice_at: planAt, updated_at: now }))
    .execute();
  if (previousPlanId === plan.id && workspace.monthly_quota === plan.monthly_credits) return null;
  const balance = await lockBalance(tx, workspaceId, now, workspace.monthly_quota);
  const limits = {
    ...(plan.limits.rate_limit_per_minute ? { rate_limit_per_minute: plan.limits.rate_limit_per_minute } : {}),
    ...(plan.limits.max_active_jobs ? { max_active_jobs: plan.limits.max_active_jobs } : {}),
  };
  await tx
    .updateTable('workspaces')
    .set({ monthly_quota: plan.monthly_credits, ...limits })
    .where('id', '=', workspaceId)
    .execute();
  const difference = plan.monthly_credits - workspace.monthly_quota;
  if (difference !== 0) {
    await tx
      .insertInto('credit_ledger')
      .values({ ...allowanceEntry(workspaceId, difference, balance.period_start), note: `plan allowance: ${previousPlanId} to ${plan.id}` })
      .execute();
  }
  await recordAudit(tx, {
    workspaceId,
    action: 'billing.plan_changed',
    actor,
    targetType: 'workspace',
    targetId: workspaceId,
    data: {
      previous_plan_id: previousPlanId,
      plan_id: plan.id,
      previous_monthly_quota: workspace.monthly_quota,
      monthly_quota: plan.monthly_credits,
      ...limits,
    },
  });
  return { workspaceId, previousPlanId, planId: plan.id, monthlyQuota: plan.monthly_credits };
}

/** The workspace's plan row (none: free, never set). */
export async function readPlanRow(
  db: Executor,
  workspaceId: string,
): Promise<{ plan_id: string; plan_invoice_at: Date | null } | undefined> {
  return db.selectFrom('workspace_plans').select(['plan_id', 'plan_invoice_at']).where('workspace_id', '=', workspaceId).executeTakeFirst();
}
