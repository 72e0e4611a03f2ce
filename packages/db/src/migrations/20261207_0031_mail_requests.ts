import { type Kysely, sql } from 'kysely';

/**
 * mail_requests: a password reset or a verification resend asked for an email, waiting for the
 * mail sender (packages/domain/src/accounts/mail-requests.ts) to find out whether the email
 * belongs to an account and to queue its mail. The request itself writes one row whatever the
 * email, so a known and an unknown email answer after the same work. A row lives until a sender
 * takes it (seconds); `attempts` and `next_attempt_at` push back one that failed.
 *
 * Additive: a new table the previous release does not know.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table mail_requests (
      id text primary key,
      kind text not null check (kind in ('reset_password', 'verify_email')),
      email text not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index mail_requests_due_idx on mail_requests (next_attempt_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table mail_requests`.execute(db);
}
