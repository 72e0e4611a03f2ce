import { type Kysely, sql } from 'kysely';

/**
 * Billing (extensions-2.md 1): credit packs bought through Stripe, auto-recharge, refunds and
 * spend caps.
 * - workspaces: the spend cap and low-credits alert (`monthly_credit_cap`,
 *   `low_credits_threshold`) and the auto-recharge settings, read by admission with the tenant;
 * - billing_customers: the workspace's Stripe customer (made once) and the card auto-recharge
 *   charges;
 * - billing_payments: every checkout and auto-recharge, with what refunds reversed; a Checkout
 *   Session and a PaymentIntent each grant at most once (unique), and at most one auto-recharge
 *   is in flight per workspace (a unique partial index);
 * - stripe_events: each Stripe event ID handled once;
 * - credit_ledger: `purchase` and `refund` entries, with the payment they came from;
 * - the month's spend kept where admission reads it: credit_balances.month_spent (reset with
 *   the month, as the plan usage is) and api_key_spend per key; each reservation names the key
 *   that made it, so its release gives the key its spend back;
 * - cap_alerted flags: `billing.spend_cap_reached` is sent once per scope and month.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Every lock first, in one statement and in the order the running release takes them (a
  // request reads its key, then its workspace, then locks the balance and writes reservations
  // and ledger entries): taken one by one as the statements below go, the migration held
  // workspaces while requests that had read api_keys waited for it (a deadlock each time).
  await sql`lock table api_keys, workspaces, credit_balances, credit_reservations, credit_ledger in access exclusive mode`.execute(db);
  await sql`
    alter table workspaces
      add column monthly_credit_cap bigint check (monthly_credit_cap >= 0),
      add column low_credits_threshold bigint check (low_credits_threshold >= 0),
      add column auto_recharge_enabled boolean not null default false,
      add column auto_recharge_threshold bigint check (auto_recharge_threshold >= 0),
      add column auto_recharge_pack_id text`.execute(db);

  await sql`
    create table billing_customers (
      workspace_id text primary key references workspaces (id) on delete cascade,
      stripe_customer_id text not null unique,
      payment_method_id text,
      card_brand text,
      card_last4 text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table billing_payments (
      id text primary key,
      workspace_id text not null references workspaces (id) on delete cascade,
      kind text not null check (kind in ('checkout', 'auto_recharge')),
      pack_id text not null,
      credits bigint not null check (credits > 0),
      amount bigint not null check (amount > 0),
      currency text not null,
      status text not null default 'pending'
        check (status in ('pending', 'paid', 'partially_refunded', 'refunded', 'failed', 'mismatch')),
      checkout_session_id text unique,
      payment_intent_id text unique,
      amount_refunded bigint not null default 0 check (amount_refunded >= 0),
      refunded_credits bigint not null default 0 check (refunded_credits >= 0),
      refund_shortfall_credits bigint not null default 0 check (refund_shortfall_credits >= 0 and refund_shortfall_credits <= refunded_credits),
      failure_message text,
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      locked_until timestamptz,
      created_at timestamptz not null default now(),
      paid_at timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index billing_payments_workspace on billing_payments (workspace_id, id desc)`.execute(db);
  await sql`create unique index billing_payments_one_recharge on billing_payments (workspace_id) where kind = 'auto_recharge' and status = 'pending'`.execute(
    db,
  );
  await sql`create index billing_payments_recharge_due on billing_payments (next_attempt_at) where kind = 'auto_recharge' and status = 'pending' and payment_intent_id is null`.execute(
    db,
  );

  await sql`
    create table stripe_events (
      id text primary key,
      type text not null,
      outcome text not null,
      payment_id text,
      received_at timestamptz not null default now()
    )`.execute(db);

  await sql`alter table credit_ledger drop constraint credit_ledger_entry_type_check`.execute(db);
  await sql`
    alter table credit_ledger add constraint credit_ledger_entry_type_check
      check (entry_type in ('plan_allowance', 'grant', 'reserve', 'release', 'settle', 'expire', 'purchase', 'refund'))`.execute(db);
  await sql`alter table credit_ledger add column payment_id text`.execute(db);
  await sql`create index credit_ledger_payment on credit_ledger (payment_id) where payment_id is not null`.execute(db);

  await sql`alter table credit_balances add column month_spent bigint not null default 0, add column cap_alerted boolean not null default false`.execute(
    db,
  );
  // What the current period's reservations hold or settled (released ones count nothing).
  // month_spent is not backfilled here: the release before this one reserves without keeping
  // it, so a value computed now is short by the end of the roll. The upgrade's contract step
  // (`npm run admin -- reconcile-counters`) and the worker's reconciler compute it from the
  // reservations once the new release runs (docs/deployment.md "Expand and contract").

  await sql`alter table api_keys add column monthly_credit_cap bigint check (monthly_credit_cap >= 0)`.execute(db);
  await sql`alter table credit_reservations add column api_key_id text`.execute(db);
  await sql`
    create table api_key_spend (
      key_id text primary key references api_keys (id) on delete cascade,
      workspace_id text not null,
      period_start date not null,
      spent bigint not null default 0,
      cap_alerted boolean not null default false
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists api_key_spend`.execute(db);
  await sql`alter table credit_reservations drop column if exists api_key_id`.execute(db);
  await sql`alter table api_keys drop column if exists monthly_credit_cap`.execute(db);
  await sql`alter table credit_balances drop column if exists month_spent, drop column if exists cap_alerted`.execute(db);
  await sql`drop index if exists credit_ledger_payment`.execute(db);
  await sql`alter table credit_ledger drop column if exists payment_id`.execute(db);
  // The older code knows grants only: a purchase is a grant of purchased credits, a refund a negative one.
  await sql`update credit_ledger set entry_type = 'grant', bucket = 'purchased' where entry_type in ('purchase', 'refund')`.execute(db);
  await sql`alter table credit_ledger drop constraint credit_ledger_entry_type_check`.execute(db);
  await sql`
    alter table credit_ledger add constraint credit_ledger_entry_type_check
      check (entry_type in ('plan_allowance', 'grant', 'reserve', 'release', 'settle', 'expire'))`.execute(db);
  await sql`drop table if exists stripe_events`.execute(db);
  await sql`drop table if exists billing_payments`.execute(db);
  await sql`drop table if exists billing_customers`.execute(db);
  await sql`
    alter table workspaces
      drop column if exists monthly_credit_cap,
      drop column if exists low_credits_threshold,
      drop column if exists auto_recharge_enabled,
      drop column if exists auto_recharge_threshold,
      drop column if exists auto_recharge_pack_id`.execute(db);
}
