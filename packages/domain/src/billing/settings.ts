import type { components } from '@sdx/contract';
import type { BillingCustomerRow, Executor, WorkspaceRow } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import { ApiError } from '../errors';
import type { Resources, Tenant } from '../resources';
import { periodStartOf } from '../time';
import { packOrThrow, renderPack } from './packs';
import { requirePayments } from './availability';
import { planOf, readPlanRow, renderPlan } from './plans';
import { FREE_PLAN_ID } from '@sdx/config';
import { currentSubscription, renderSubscription } from './subscriptions';

/**
 * The workspace's billing settings (extensions-2.md 1): GET /v1/billing, PUT
 * /v1/billing/auto-recharge and PUT /v1/billing/limits. The settings are columns of the
 * workspace (admission reads them with the tenant); the card is the workspace's
 * billing_customers row, saved by a paid checkout (stripe-events.ts).
 */
export type Billing = components['schemas']['Billing'];
export type AutoRecharge = components['schemas']['AutoRecharge'];
export type BillingLimits = components['schemas']['BillingLimits'];
export type AutoRechargeRequest = components['schemas']['AutoRechargeRequest'];

type BillingColumns = Pick<
  WorkspaceRow,
  'auto_recharge_enabled' | 'auto_recharge_threshold' | 'auto_recharge_pack_id' | 'monthly_credit_cap' | 'low_credits_threshold'
>;

export function renderAutoRecharge(
  workspace: BillingColumns,
  customer: Pick<BillingCustomerRow, 'card_brand' | 'card_last4'> | undefined,
): AutoRecharge {
  const card = customer?.card_brand && customer.card_last4 ? { brand: customer.card_brand, last4: customer.card_last4 } : null;
  return {
    enabled: workspace.auto_recharge_enabled,
    threshold_credits: workspace.auto_recharge_threshold,
    pack_id: workspace.auto_recharge_pack_id,
    payment_method: card,
  };
}

export function renderLimits(workspace: BillingColumns): BillingLimits {
  return { monthly_credit_cap: workspace.monthly_credit_cap, low_credits_threshold: workspace.low_credits_threshold };
}

async function readWorkspace(db: Executor, workspaceId: string): Promise<BillingColumns> {
  return db
    .selectFrom('workspaces')
    .select(['auto_recharge_enabled', 'auto_recharge_threshold', 'auto_recharge_pack_id', 'monthly_credit_cap', 'low_credits_threshold'])
    .where('id', '=', workspaceId)
    .executeTakeFirstOrThrow();
}

async function readCustomer(db: Executor, workspaceId: string): Promise<BillingCustomerRow | undefined> {
  return db.selectFrom('billing_customers').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/**
 * GET /v1/billing. `month_spent_credits` is the balance row's month_spent (kept by admission and
 * settlement); a row last written in an earlier month has spent nothing in this one.
 */
export async function getBilling(services: Pick<Resources, 'db' | 'config' | 'clock' | 'payments'>, tenant: Tenant): Promise<Billing> {
  const workspaceId = tenant.workspace.id;
  const [workspace, customer, balance, planRow, subscription] = await Promise.all([
    readWorkspace(services.db, workspaceId),
    readCustomer(services.db, workspaceId),
    services.db
      .selectFrom('credit_balances')
      .select(['period_start', 'month_spent'])
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst(),
    readPlanRow(services.db, workspaceId),
    currentSubscription(services.db, workspaceId),
  ]);
  const current = balance && balance.period_start >= periodStartOf(services.clock.now());
  return {
    packs: services.config.creditPacks.map(renderPack),
    auto_recharge: renderAutoRecharge(workspace, customer),
    limits: renderLimits(workspace),
    month_spent_credits: current ? balance.month_spent : 0,
    // Payments work when every billing write would: the gateway is there (availability.ts requirePayments).
    payments_enabled: services.payments !== undefined,
    plans: services.config.plans.map(renderPlan),
    plan: renderPlan(planOf(services.config, planRow?.plan_id ?? FREE_PLAN_ID)),
    subscription: subscription ? renderSubscription(services.config, subscription) : null,
  };
}

/**
 * PUT /v1/billing/auto-recharge. Turning it on needs the card a checkout saved (409
 * `payment_method_required`); turning it off is always allowed. The pack must be on sale (422).
 * `threshold_credits` must be below the pack's credits (422 `invalid_threshold`). Enabling
 * charges nothing by itself: the next settlement that leaves the available credits below the
 * threshold does (a reservation never does).
 */
export async function updateAutoRecharge(
  services: Pick<Resources, 'db' | 'config' | 'payments'>,
  tenant: Tenant,
  input: AutoRechargeRequest,
  actor: Actor,
): Promise<AutoRecharge> {
  requirePayments(services);
  const pack = packOrThrow(services.config, input.pack_id);
  // A threshold at or above the pack would leave the credits below it after a recharge: every settlement would charge again.
  if (input.threshold_credits >= pack.credits) {
    throw new ApiError(
      'invalid_threshold',
      `threshold_credits (${input.threshold_credits}) must be below the pack's ${pack.credits} credits.`,
    );
  }
  const workspaceId = tenant.workspace.id;
  return services.db.transaction().execute(async (tx) => {
    // The customer row is locked so a card saved (or forgotten) meanwhile is seen as it will be.
    const customer = await tx
      .selectFrom('billing_customers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .forShare()
      .executeTakeFirst();
    if (input.enabled && !customer?.payment_method_id) {
      throw new ApiError('payment_method_required', 'Auto-recharge needs a saved card: buy a pack once with Checkout first.');
    }
    const workspace = await tx
      .updateTable('workspaces')
      .set({ auto_recharge_enabled: input.enabled, auto_recharge_threshold: input.threshold_credits, auto_recharge_pack_id: input.pack_id })
      .where('id', '=', workspaceId)
      .returning([
        'auto_recharge_enabled',
        'auto_recharge_threshold',
        'auto_recharge_pack_id',
        'monthly_credit_cap',
        'low_credits_threshold',
      ])
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId,
      action: 'billing.auto_recharge_updated',
      actor,
      targetType: 'workspace',
      targetId: workspaceId,
      data: { enabled: input.enabled, threshold_credits: input.threshold_credits, pack_id: input.pack_id },
    });
    return renderAutoRecharge(workspace, customer);
  });
}

/** PUT /v1/billing/limits: the spend cap and the low-credits alert; works without Stripe. */
export async function updateBillingLimits(
  services: Pick<Resources, 'db'>,
  tenant: Tenant,
  input: BillingLimits,
  actor: Actor,
): Promise<BillingLimits> {
  const workspaceId = tenant.workspace.id;
  return services.db.transaction().execute(async (tx) => {
    const workspace = await tx
      .updateTable('workspaces')
      .set({ monthly_credit_cap: input.monthly_credit_cap, low_credits_threshold: input.low_credits_threshold })
      .where('id', '=', workspaceId)
      .returning([
        'auto_recharge_enabled',
        'auto_recharge_threshold',
        'auto_recharge_pack_id',
        'monthly_credit_cap',
        'low_credits_threshold',
      ])
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId,
      action: 'billing.limits_updated',
      actor,
      targetType: 'workspace',
      targetId: workspaceId,
      data: renderLimits(workspace),
    });
    return renderLimits(workspace);
  });
}
