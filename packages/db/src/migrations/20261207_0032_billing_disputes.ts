import { type Kysely, sql } from 'kysely';

/**
 * Disputes and early reversals (extensions-3.md 1):
 * - billing_payments gains the dispute of its charge: `dispute_id`, `dispute_status` (open, won,
 *   lost), `disputed_credits` (what the dispute took back from the purchased credits, granted
 *   back when it is won) and `dispute_shortfall_credits` (the part of the reversal that was
 *   already spent, counted in refund_shortfall_credits while the dispute stands).
 * - stripe_held_events: a `charge.refunded` or `charge.dispute.*` event whose payment was not
 *   granted yet, kept by its PaymentIntent until the grant applies it (once: `applied_at`).
 *
 * Additive and safe while the previous release runs: new nullable or defaulted columns (no
 * rewrite), a new table the previous release never reads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table billing_payments
      add column dispute_id text,
      add column dispute_status text,
      add column disputed_credits bigint not null default 0,
      add column dispute_shortfall_credits bigint not null default 0`.execute(db);
  await sql`
    create table stripe_held_events (
      event_id text primary key,
      payment_intent_id text not null,
      type text not null,
      object jsonb not null,
      received_at timestamptz not null default now(),
      applied_at timestamptz
    )`.execute(db);
  await sql`create index stripe_held_events_intent on stripe_held_events (payment_intent_id) where applied_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists stripe_held_events`.execute(db);
  await sql`
    alter table billing_payments
      drop column if exists dispute_id,
      drop column if exists dispute_status,
      drop column if exists disputed_credits,
      drop column if exists dispute_shortfall_credits`.execute(db);
}
