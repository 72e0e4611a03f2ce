import type { components } from '@sdx/contract';
import type { CreditPack } from '@sdx/config';
import type { BillingPaymentRow, BillingPaymentsTable, Executor } from '@sdx/db';
import type { Insertable } from 'kysely';
import { RequestValidationError } from '../errors';
import { type Page, type PageRequest, pageOf } from '../paging';

/** The pending row of a Checkout Session's payment: the pack's credits and price as they are now. */
export function checkoutPaymentRow(
  id: string,
  workspaceId: string,
  pack: CreditPack,
  checkoutSessionId: string,
  createdAt: Date,
  now: Date,
): Insertable<BillingPaymentsTable> {
  return {
    id,
    workspace_id: workspaceId,
    kind: 'checkout',
    pack_id: pack.id,
    credits: pack.credits,
    amount: pack.amount,
    currency: pack.currency,
    status: 'pending',
    checkout_session_id: checkoutSessionId,
    payment_intent_id: null,
    failure_message: null,
    next_attempt_at: null,
    locked_until: null,
    paid_at: null,
    created_at: createdAt,
    updated_at: now,
  };
}

/** A payment as the API renders it (Payment of openapi.yaml). */
export type Payment = components['schemas']['Payment'];

export function renderPayment(row: BillingPaymentRow): Payment {
  return {
    id: row.id,
    kind: row.kind,
    pack_id: row.pack_id,
    credits: row.credits,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    refunded_credits: row.refunded_credits,
    refund_shortfall_credits: row.refund_shortfall_credits,
    created_at: row.created_at.toISOString(),
    paid_at: row.paid_at ? row.paid_at.toISOString() : null,
    dispute_status: row.dispute_status ?? null,
    disputed_credits: Number(row.disputed_credits ?? 0),
  };
}

/**
 * A page of the workspace's payments, newest first (IDs are time-ordered; the index
 * billing_payments_workspace is (workspace_id, id desc)). `starting_after` must be a payment of
 * the workspace: anything else is a 422 on that parameter, as the other lists answer.
 */
export async function listPayments(db: Executor, workspaceId: string, page: PageRequest): Promise<Page<BillingPaymentRow>> {
  if (page.startingAfter !== null) {
    const found = await db
      .selectFrom('billing_payments')
      .select('id')
      .where('id', '=', page.startingAfter)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!found) {
      throw new RequestValidationError([
        {
          loc: ['query', 'starting_after'],
          msg: `No payment ${page.startingAfter} in this workspace to start after`,
          type: 'value_error',
          input: page.startingAfter,
        },
      ]);
    }
  }
  let query = db.selectFrom('billing_payments').selectAll().where('workspace_id', '=', workspaceId);
  if (page.startingAfter !== null) query = query.where('id', '<', page.startingAfter);
  const rows = await query
    .orderBy('workspace_id')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  return pageOf(rows, page.limit);
}
