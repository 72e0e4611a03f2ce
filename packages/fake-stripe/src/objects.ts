import { newId } from './ids';

/**
 * Stripe's objects as its API renders them (field sets of the component schemas in
 * spec/stripe-subset.json; test/objects.test.ts holds them to those schemas).
 */
export interface StripeObject {
  id: string;
  object: string;
  [key: string]: unknown;
}

export type Metadata = Record<string, string>;

export interface Customer extends StripeObject {
  object: 'customer';
  email: string | null;
  name: string | null;
  metadata: Metadata;
}

export interface CheckoutSession extends StripeObject {
  object: 'checkout.session';
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  customer: string | null;
  client_reference_id: string | null;
  metadata: Metadata;
  mode: string;
  payment_intent: string | null;
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  status: 'open' | 'complete' | 'expired';
  success_url: string;
  cancel_url: string | null;
  url: string | null;
}

export interface PaymentMethod extends StripeObject {
  object: 'payment_method';
  customer: string | null;
  card: { brand: string; last4: string; exp_month: number; exp_year: number; [key: string]: unknown };
}

export interface PaymentIntent extends StripeObject {
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  payment_method: string | null;
  metadata: Metadata;
  status: string;
  latest_charge: string | null;
  last_payment_error: Record<string, unknown> | null;
  setup_future_usage: string | null;
}

export interface Charge extends StripeObject {
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  refunded: boolean;
  paid: boolean;
  status: 'succeeded' | 'pending' | 'failed';
  currency: string;
  payment_intent: string | null;
  payment_method: string | null;
}

export interface Refund extends StripeObject {
  object: 'refund';
  amount: number;
  charge: string;
  payment_intent: string | null;
}

export interface LineItem extends StripeObject {
  object: 'item';
  amount_total: number;
  currency: string;
  description: string;
  quantity: number;
}

const emptyAddress = () => ({ city: null, country: null, line1: null, line2: null, postal_code: null, state: null });

/** Stripe's `metadata` parameter: an empty string clears it, an empty value drops its key. */
export function metadataOf(param: unknown, current: Metadata = {}): Metadata {
  if (param === '' || param === undefined || param === null) return param === '' ? {} : { ...current };
  const out: Metadata = { ...current };
  for (const [key, value] of Object.entries(param as Record<string, unknown>)) {
    if (value === '') delete out[key];
    else out[key] = String(value);
  }
  return out;
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export function customerObject(params: Record<string, unknown>, created: number): Customer {
  return {
    id: newId('cus_', 14),
    object: 'customer',
    address: null,
    balance: typeof params.balance === 'number' ? params.balance : 0,
    created,
    currency: null,
    default_source: null,
    delinquent: false,
    description: str(params.description),
    discount: null,
    email: str(params.email),
    invoice_prefix: newId('', 8).toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: metadataOf(params.metadata),
    name: str(params.name),
    next_invoice_sequence: 1,
    phone: str(params.phone),
    preferred_locales: Array.isArray(params.preferred_locales) ? params.preferred_locales : [],
    shipping: null,
    tax_exempt: typeof params.tax_exempt === 'string' ? params.tax_exempt : 'none',
    test_clock: null,
  };
}

export interface LineItemInput {
  name: string;
  currency: string;
  unitAmount: number;
  quantity: number;
}

export function lineItemObject(input: LineItemInput, created: number): LineItem {
  const amount = input.unitAmount * input.quantity;
  return {
    id: newId('li_'),
    object: 'item',
    amount_discount: 0,
    amount_subtotal: amount,
    amount_tax: 0,
    amount_total: amount,
    currency: input.currency,
    description: input.name,
    price: {
      id: newId('price_'),
      object: 'price',
      active: false,
      billing_scheme: 'per_unit',
      created,
      currency: input.currency,
      custom_unit_amount: null,
      livemode: false,
      lookup_key: null,
      metadata: {},
      nickname: null,
      product: newId('prod_', 14),
      recurring: null,
      tax_behavior: 'unspecified',
      tiers_mode: null,
      transform_quantity: null,
      type: 'one_time',
      unit_amount: input.unitAmount,
      unit_amount_decimal: String(input.unitAmount),
    },
    quantity: input.quantity,
  };
}

export interface SessionInput {
  params: Record<string, unknown>;
  amountTotal: number;
  currency: string;
  customer: Customer | null;
  created: number;
  publicUrl: string;
}

export function checkoutSessionObject({ params, amountTotal, currency, customer, created, publicUrl }: SessionInput): CheckoutSession {
  const id = newId('cs_test_', 58);
  return {
    id,
    object: 'checkout.session',
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: amountTotal,
    amount_total: amountTotal,
    automatic_tax: { enabled: false, liability: null, status: null },
    billing_address_collection: null,
    cancel_url: str(params.cancel_url),
    client_reference_id: str(params.client_reference_id),
    consent: null,
    consent_collection: null,
    created,
    currency,
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: customer?.id ?? null,
    customer_creation: customer ? null : 'if_required',
    customer_details: customer
      ? { address: null, email: customer.email, name: customer.name, phone: null, tax_exempt: 'none', tax_ids: [] }
      : null,
    customer_email: str(params.customer_email),
    expires_at: created + 24 * 3600,
    invoice: null,
    invoice_creation: {
      enabled: false,
      invoice_data: { account_tax_ids: null, custom_fields: null, description: null, footer: null, metadata: {}, rendering_options: null },
    },
    livemode: false,
    locale: null,
    metadata: metadataOf(params.metadata),
    mode: String(params.mode),
    payment_intent: null,
    payment_link: null,
    payment_method_collection: 'if_required',
    payment_method_options: {},
    payment_method_types: Array.isArray(params.payment_method_types) ? params.payment_method_types : ['card'],
    payment_status: 'unpaid',
    phone_number_collection: { enabled: false },
    recovered_from: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_details: null,
    shipping_options: [],
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: String(params.success_url),
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    url: `${publicUrl}/checkout/${id}`,
  };
}

export function paymentMethodObject(card: { brand: string; last4: string }, customer: string | null, created: number): PaymentMethod {
  return {
    id: newId('pm_'),
    object: 'payment_method',
    billing_details: { address: emptyAddress(), email: null, name: null, phone: null },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      exp_month: 12,
      exp_year: new Date().getUTCFullYear() + 3,
      fingerprint: newId('', 16),
      funding: 'credit',
      generated_from: null,
      last4: card.last4,
      networks: { available: [card.brand], preferred: null },
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created,
    customer,
    livemode: false,
    metadata: {},
    type: 'card',
  };
}

export interface IntentInput {
  amount: number;
  currency: string;
  customer: string | null;
  paymentMethod: string | null;
  metadata: Metadata;
  setupFutureUsage: string | null;
  description?: string | null;
  created: number;
}

export function paymentIntentObject(input: IntentInput): PaymentIntent {
  const id = newId('pi_');
  return {
    id,
    object: 'payment_intent',
    amount: input.amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: 'automatic',
    client_secret: `${id}_secret_${newId('', 25)}`,
    confirmation_method: 'automatic',
    created: input.created,
    currency: input.currency,
    customer: input.customer,
    description: input.description ?? null,
    invoice: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    metadata: input.metadata,
    next_action: null,
    on_behalf_of: null,
    payment_method: input.paymentMethod,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: ['card'],
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: input.setupFutureUsage,
    shipping: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: input.paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
    transfer_data: null,
    transfer_group: null,
  };
}

export interface Decline {
  code: string;
  declineCode: string;
  message: string;
}

export const INSUFFICIENT_FUNDS: Decline = {
  code: 'card_declined',
  declineCode: 'insufficient_funds',
  message: 'Your card has insufficient funds.',
};

/** The charge of a confirmation: succeeded, pending (an asynchronous payment) or failed. */
export function chargeObject(
  intent: PaymentIntent,
  method: PaymentMethod,
  outcome: 'succeeded' | 'pending' | Decline,
  created: number,
): Charge {
  const failed = typeof outcome === 'object' ? outcome : null;
  const status: Charge['status'] = typeof outcome === 'object' ? 'failed' : outcome;
  const card = method.card;
  return {
    id: newId('ch_'),
    object: 'charge',
    amount: intent.amount,
    amount_captured: status === 'succeeded' ? intent.amount : 0,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: status === 'succeeded' ? newId('txn_') : null,
    billing_details: { address: emptyAddress(), email: null, name: null, phone: null },
    calculated_statement_descriptor: 'SDX CREDITS',
    captured: status === 'succeeded',
    created,
    currency: intent.currency,
    customer: intent.customer,
    description: intent.description ?? null,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: failed ? failed.code : null,
    failure_message: failed ? failed.message : null,
    fraud_details: {},
    invoice: null,
    livemode: false,
    metadata: { ...intent.metadata },
    on_behalf_of: null,
    outcome: failed
      ? {
          network_status: 'declined_by_network',
          reason: failed.declineCode,
          risk_level: 'normal',
          risk_score: 20,
          seller_message: `The bank returned the decline code \`${failed.declineCode}\`.`,
          type: 'issuer_declined',
        }
      : {
          network_status: 'approved_by_network',
          reason: null,
          risk_level: 'normal',
          risk_score: 20,
          seller_message: 'Payment complete.',
          type: 'authorized',
        },
    paid: status === 'succeeded',
    payment_intent: intent.id,
    payment_method: method.id,
    payment_method_details: {
      card: {
        brand: card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: 'US',
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        fingerprint: card.fingerprint,
        funding: 'credit',
        installments: null,
        last4: card.last4,
        mandate: null,
        network: card.brand,
        three_d_secure: null,
        wallet: null,
      },
      type: 'card',
    },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: false,
    review: null,
    shipping: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status,
    transfer_data: null,
    transfer_group: null,
  };
}

export function refundObject(charge: Charge, amount: number, params: Record<string, unknown>, created: number): Refund {
  return {
    id: newId('re_'),
    object: 'refund',
    amount,
    balance_transaction: newId('txn_'),
    charge: charge.id,
    created,
    currency: charge.currency,
    metadata: metadataOf(params.metadata),
    payment_intent: charge.payment_intent,
    reason: str(params.reason),
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
}
