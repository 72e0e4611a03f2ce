import type { Resources } from '../resources';
import { recordBillingAlerts, type BillingAlert } from './alerts';
import { applyPlan, freePlan } from './plans';
import { LIVE_STATUSES } from './subscriptions';
import { systemActor } from '../audit/audit';

/**
 * The grace period of a failed subscription invoice (extensions-3.md 2): a subscription past due
 * since longer than PLAN_GRACE_DAYS, with no invoice paid since, puts its workspace on `free`
 * (and `billing.plan_changed` tells it). The state is the subscription's row (`past_due_since`,
 * set by `invoice.payment_failed` and cleared by `invoice.paid`), so a restart loses nothing: the
 * scheduler's next pass finds what is due. Each subscription is ended once (`grace_ended_at`),
 * under a row lock that another replica's pass skips. An invoice paid later brings the plan back.
 */
export const GRACE_ACTOR = systemActor('plan-grace');

const BATCH = 100;

export async function endGracePeriods(
  services: Pick<Resources, 'db' | 'config' | 'clock' | 'log' | 'outbox'>,
  now: Date = services.clock.now(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - services.config.planGraceDays * 86_400_000);
  let ended = 0;
  let wrote = false;
  for (;;) {
    const done = await services.db.transaction().execute(async (tx) => {
      const due = await tx
        .selectFrom('billing_subscriptions')
        .select(['id', 'workspace_id', 'plan_id'])
        .where('status', '=', 'past_due')
        .where('grace_ended_at', 'is', null)
        .where('past_due_since', '<=', cutoff)
        .orderBy('past_due_since')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      const alerts: BillingAlert[] = [];
      for (const sub of due) {
        await tx.updateTable('billing_subscriptions').set({ grace_ended_at: now, updated_at: now }).where('id', '=', sub.id).execute();
        const otherLive = await tx
          .selectFrom('billing_subscriptions')
          .select('id')
          .where('workspace_id', '=', sub.workspace_id)
          .where('id', '!=', sub.id)
          .where('status', 'in', [...LIVE_STATUSES])
          .where('past_due_since', 'is', null)
          .executeTakeFirst();
        if (otherLive) continue;
        const change = await applyPlan(tx, sub.workspace_id, freePlan(services.config), now, null, GRACE_ACTOR);
        if (change) {
          alerts.push({
            workspaceId: sub.workspace_id,
            type: 'billing.plan_changed',
            data: {
              message: `No invoice of the ${sub.plan_id} plan was paid within ${services.config.planGraceDays} days: the workspace is on the free plan (${change.monthlyQuota.toLocaleString('en-US')} credits a month) until one is.`,
              plan_id: change.planId,
              previous_plan_id: change.previousPlanId,
              reason: null,
              available_credits: null,
              low_credits_threshold: null,
              scope: null,
              key_id: null,
              cap: null,
              spent: null,
            },
          });
        }
      }
      await recordBillingAlerts(tx, services.config, now, alerts);
      if (alerts.length > 0) wrote = true;
      return due.length;
    });
    ended += done;
    if (done < BATCH) break;
  }
  if (wrote) services.outbox.written();
  if (ended > 0) services.log.info({ ended }, 'plan grace periods ended');
  return ended;
}
