import { type Kysely, sql } from 'kysely';

/**
 * Monthly plans (extensions-3.md 2), expand-only: the previous release keeps running on it (it
 * writes no plan; a workspace it makes is on `free` by the column's default).
 * - workspace_plans: the plan whose quota and limits a workspace has (no row: `free`, until a
 *   paid invoice says otherwise; its own table, so the request path's reads of the workspace are
 *   unchanged); plan_invoice_at: when the invoice that set it was made, so an older invoice's
 *   event arriving late changes nothing (the quota follows the last paid invoice);
 * - billing_subscriptions: each Stripe subscription of a workspace, mirrored from its events
 *   (status, period end, cancellation at period end), the plan its paid invoices put in force
 *   (plan_id) and the plan it is priced at now (price_plan_id: a downgrade's, until the next
 *   invoice), and, while an invoice is unpaid, since when (the grace period's start);
 * - billing_invoices: the subscriptions' invoices, recorded from the events;
 * - billing_prices: the Stripe Price of each plan (by amount and currency), made once and reused.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table workspace_plans (
      workspace_id text primary key references workspaces (id) on delete cascade,
      plan_id text not null,
      plan_invoice_at timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    create table billing_subscriptions (
      id text primary key,
      workspace_id text not null references workspaces (id) on delete cascade,
      plan_id text not null,
      status text not null check (status in ('incomplete', 'active', 'past_due', 'canceled')),
      item_id text,
      current_period_end timestamptz,
      cancel_at_period_end boolean not null default false,
      price_plan_id text,
      past_due_since timestamptz,
      grace_ended_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index billing_subscriptions_workspace on billing_subscriptions (workspace_id, created_at desc)`.execute(db);
  await sql`create index billing_subscriptions_past_due on billing_subscriptions (past_due_since) where status = 'past_due' and grace_ended_at is null`.execute(
    db,
  );

  await sql`
    create table billing_invoices (
      id text primary key,
      workspace_id text not null references workspaces (id) on delete cascade,
      subscription_id text,
      plan_id text,
      number text,
      status text not null,
      amount_due bigint not null default 0,
      amount_paid bigint not null default 0,
      currency text not null,
      period_start timestamptz,
      period_end timestamptz,
      hosted_invoice_url text,
      created_at timestamptz not null,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index billing_invoices_workspace on billing_invoices (workspace_id, created_at desc, id desc)`.execute(db);

  await sql`
    create table billing_prices (
      plan_id text not null,
      amount bigint not null check (amount > 0),
      currency text not null,
      stripe_price_id text not null unique,
      created_at timestamptz not null default now(),
      primary key (plan_id, amount, currency)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists billing_prices`.execute(db);
  await sql`drop table if exists billing_invoices`.execute(db);
  await sql`drop table if exists billing_subscriptions`.execute(db);
  await sql`drop table if exists workspace_plans`.execute(db);
}
