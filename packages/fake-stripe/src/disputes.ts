import { invalidRequest } from './errors';
import { newId, unixNow } from './ids';
import type { Charge, PaymentIntent, StripeObject } from './objects';
import type { Emitted, RequestRef, StripeState } from './state';

/**
 * Disputes (chargebacks), as Stripe makes them: a cardholder's bank disputes a succeeded charge
 * (`charge.dispute.created`, then `charge.dispute.funds_withdrawn`; the charge becomes
 * `disputed`), and the dispute closes `won` (`charge.dispute.closed`, then
 * `charge.dispute.funds_reinstated`) or `lost` (`charge.dispute.closed`). Stripe makes them
 * only from a card network; here a test (or the dashboard) does. Kept apart from the payments
 * of state.ts: the objects and events are the account's, the steps are these.
 */

export interface Dispute extends StripeObject {
  object: 'dispute';
  amount: number;
  charge: string;
  currency: string;
  payment_intent: string | null;
  reason: string;
  status: 'warning_needs_response' | 'needs_response' | 'under_review' | 'won' | 'lost';
  is_charge_refundable: boolean;
}

export interface DisputeOptions {
  /** Stripe's dispute reason (default `fraudulent`). */
  reason?: string;
  /** The amount disputed (default the charge's amount less what was refunded). */
  amount?: number;
}

export function disputeObject(charge: Charge, amount: number, reason: string, created: number): Dispute {
  return {
    id: newId('dp_'),
    object: 'dispute',
    amount,
    balance_transactions: [],
    charge: charge.id,
    created,
    currency: charge.currency,
    evidence: {
      access_activity_log: null,
      billing_address: null,
      cancellation_policy: null,
      cancellation_policy_disclosure: null,
      cancellation_rebuttal: null,
      customer_communication: null,
      customer_email_address: null,
      customer_name: null,
      customer_purchase_ip: null,
      customer_signature: null,
      duplicate_charge_documentation: null,
      duplicate_charge_explanation: null,
      duplicate_charge_id: null,
      product_description: null,
      receipt: null,
      refund_policy: null,
      refund_policy_disclosure: null,
      refund_refusal_explanation: null,
      service_date: null,
      service_documentation: null,
      shipping_address: null,
      shipping_carrier: null,
      shipping_date: null,
      shipping_documentation: null,
      shipping_tracking_number: null,
      uncategorized_file: null,
      uncategorized_text: null,
    },
    evidence_details: { due_by: created + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: charge.payment_intent,
    reason,
    status: 'needs_response',
  };
}

/** The charge a PaymentIntent or charge ID names (a PaymentIntent's latest). */
function chargeOf<E extends Emitted>(state: StripeState<E>, id: string): Charge {
  if (id.startsWith('pi_')) {
    const intent = state.get<PaymentIntent>('payment_intent', id, 'payment_intent', 400);
    if (!intent.latest_charge) throw invalidRequest(`PaymentIntent ${id} has no charge to dispute.`, 'payment_intent');
    return state.get<Charge>('charge', intent.latest_charge);
  }
  return state.get<Charge>('charge', id, 'charge', 400);
}

/** A dispute of the succeeded charge of `chargeOrIntentId`: its `charge.dispute.created` event (and `funds_withdrawn`). */
export function openDispute<E extends Emitted>(
  state: StripeState<E>,
  chargeOrIntentId: string,
  options: DisputeOptions,
  request: RequestRef,
): { dispute: Dispute; event: E } {
  const charge = chargeOf(state, chargeOrIntentId);
  if (charge.status !== 'succeeded') throw invalidRequest(`Charge ${charge.id} has not succeeded; there is nothing to dispute.`, 'charge');
  if (charge.disputed) throw invalidRequest(`Charge ${charge.id} is disputed already.`, 'charge');
  const amount = options.amount ?? charge.amount - charge.amount_refunded;
  if (!Number.isInteger(amount) || amount < 1 || amount > charge.amount)
    throw invalidRequest('Dispute amount must be a positive integer no more than the charge.', 'amount');
  const dispute = state.put(disputeObject(charge, amount, options.reason ?? 'fraudulent', unixNow()));
  charge.disputed = true;
  const event = state.emit('charge.dispute.created', dispute, request);
  state.emit('charge.dispute.funds_withdrawn', dispute, request);
  return { dispute, event };
}

/** The dispute closed `won` or `lost`: its `charge.dispute.closed` event (and `funds_reinstated` when won). */
export function closeDispute<E extends Emitted>(
  state: StripeState<E>,
  disputeId: string,
  status: 'won' | 'lost',
  request: RequestRef,
): { dispute: Dispute; event: E } {
  const dispute = state.get<Dispute>('dispute', disputeId);
  if (dispute.status === 'won' || dispute.status === 'lost') throw invalidRequest(`Dispute ${disputeId} is closed already.`, 'dispute');
  dispute.status = status;
  const event = state.emit('charge.dispute.closed', dispute, request);
  if (status === 'won') state.emit('charge.dispute.funds_reinstated', dispute, request);
  return { dispute, event };
}
