import { type Kysely, sql } from 'kysely';

/**
 * The trust layer (extensions-2.md 2):
 * - emails in their one compared form (trimmed, NFKC, lower-cased; not undone on the way down);
 * - users.email_verified_at (accounts that exist already count as verified), the TOTP secret
 *   (sealed, as every secret at rest), when two-factor sign-in was turned on and the last time
 *   step a code was accepted for (a code counts once);
 * - two_factor_recovery_codes: ten single-use codes per user, by hash;
 * - auth_tokens: single-use email verification and password reset tokens, by hash (a
 *   verification link from a sign-up carries the password of that sign-up);
 * - mail_outbox: every mail is written with the change that causes it, then sent with retries;
 *   the rendered body is sealed and dropped once the mail is sent;
 * - workspaces.require_two_factor, and created_by (who made a team workspace: the bound on team
 *   workspaces per user counts it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Every lock first, in one statement and in the order the running release takes them (a
  // request reads users before workspaces): taken one by one as the statements below go, the
  // migration would hold workspaces while the release holds what it waits for (a deadlock).
  await sql`lock table users, invitations, workspaces in access exclusive mode`.execute(db);
  // Emails are stored in their one compared form: trimmed, NFKC, lower-cased (identity/emails.ts).
  await sql`update users set email = lower(normalize(btrim(email), NFKC)) where email <> lower(normalize(btrim(email), NFKC))`.execute(db);
  await sql`update invitations set email = lower(normalize(btrim(email), NFKC)) where email <> lower(normalize(btrim(email), NFKC))`.execute(
    db,
  );
  await sql`alter table users add column email_verified_at timestamptz`.execute(db);
  await sql`update users set email_verified_at = created_at`.execute(db);
  await sql`alter table users add column two_factor_secret text`.execute(db);
  await sql`alter table users add column two_factor_enabled_at timestamptz`.execute(db);
  await sql`alter table users add column two_factor_last_step bigint`.execute(db);

  await sql`
    create table two_factor_recovery_codes (
      user_id text not null references users (id) on delete cascade,
      code_hash text not null,
      used_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (user_id, code_hash)
    )`.execute(db);

  await sql`
    create table auth_tokens (
      id text primary key,
      user_id text not null references users (id) on delete cascade,
      purpose text not null check (purpose in ('verify_email', 'reset_password')),
      token_hash text not null unique,
      password_hash text,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index auth_tokens_user_purpose on auth_tokens (user_id, purpose, created_at)`.execute(db);

  await sql`
    create table mail_outbox (
      id text primary key,
      recipient text not null,
      template text not null,
      subject text not null,
      body_sealed text,
      status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      locked_until timestamptz,
      last_error text,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    )`.execute(db);
  await sql`create index mail_outbox_due on mail_outbox (next_attempt_at) where status = 'pending'`.execute(db);
  await sql`create index mail_outbox_recipient on mail_outbox (recipient, template, created_at)`.execute(db);

  await sql`alter table workspaces add column require_two_factor boolean not null default false`.execute(db);
  await sql`alter table workspaces add column created_by text references users (id) on delete set null`.execute(db);
  await sql`
    update workspaces w set created_by = a.actor_id
    from audit_events a
    where a.workspace_id = w.id and a.action = 'workspace.created' and a.actor_type = 'user' and w.kind = 'team'`.execute(db);
  await sql`create index workspaces_created_by on workspaces (created_by) where created_by is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists workspaces_created_by`.execute(db);
  await sql`alter table workspaces drop column if exists created_by`.execute(db);
  await sql`alter table workspaces drop column if exists require_two_factor`.execute(db);
  await sql`drop table if exists mail_outbox`.execute(db);
  await sql`drop table if exists auth_tokens`.execute(db);
  await sql`drop table if exists two_factor_recovery_codes`.execute(db);
  await sql`alter table users drop column if exists two_factor_last_step`.execute(db);
  await sql`alter table users drop column if exists two_factor_enabled_at`.execute(db);
  await sql`alter table users drop column if exists two_factor_secret`.execute(db);
  await sql`alter table users drop column if exists email_verified_at`.execute(db);
}
