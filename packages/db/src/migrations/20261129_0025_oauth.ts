import { type Kysely, sql } from 'kysely';

/**
 * OAuth 2.1 for remote agents (extensions-2.md 3):
 * - api_keys gains `kind` ('api_key', or 'oauth' for a grant a user consented to) and the
 *   client the grant was made for; an OAuth grant is one key of the workspace, listed, revoked
 *   and audited with the others;
 * - oauth_clients: clients registered by RFC 7591 dynamic registration (public clients only);
 * - oauth_codes: authorization codes by hash (PKCE S256 challenge, the consent's workspace,
 *   role and redirect URI, 10 minutes, used once; the grant it was made for);
 * - oauth_tokens: access and refresh tokens by hash, each of one grant (`key_id`); a refresh
 *   token is retired when it is used (rotation), and presenting a retired one revokes its grant.
 *
 * Down revokes the grants (a key of kind oauth has no secret anyone holds, so it would be a
 * dead key anyway) and removes the tables and columns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // The running release's order (its key, then its workspace), before any other lock.
  await sql`lock table api_keys in access exclusive mode`.execute(db);
  await sql`lock table users, workspaces in share row exclusive mode`.execute(db);
  await sql`
    create table oauth_clients (
      id text primary key,
      client_name text,
      redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 10),
      metadata jsonb not null,
      created_at timestamptz not null default now()
    )`.execute(db);

  await sql`
    alter table api_keys
      add column kind text not null default 'api_key' check (kind in ('api_key', 'oauth')),
      add column oauth_client_id text references oauth_clients (id) on delete set null`.execute(db);
  await sql`alter table api_keys add constraint api_keys_oauth_client check (kind = 'oauth' or oauth_client_id is null)`.execute(db);

  await sql`
    create table oauth_codes (
      code_hash text primary key,
      client_id text not null references oauth_clients (id) on delete cascade,
      key_id text not null references api_keys (id) on delete cascade,
      user_id text not null references users (id) on delete cascade,
      workspace_id text not null references workspaces (id) on delete cascade,
      role text not null,
      redirect_uri text not null,
      code_challenge text not null,
      scope text not null default '',
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index oauth_codes_expires on oauth_codes (expires_at)`.execute(db);

  await sql`
    create table oauth_tokens (
      token_hash text primary key,
      key_id text not null references api_keys (id) on delete cascade,
      kind text not null check (kind in ('access', 'refresh')),
      scope text not null default '',
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      retired_at timestamptz
    )`.execute(db);
  await sql`create index oauth_tokens_key on oauth_tokens (key_id)`.execute(db);
  await sql`create index oauth_tokens_expires on oauth_tokens (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table oauth_tokens`.execute(db);
  await sql`drop table oauth_codes`.execute(db);
  await sql`update api_keys set revoked_at = coalesce(revoked_at, now()) where kind = 'oauth'`.execute(db);
  await sql`alter table api_keys drop constraint api_keys_oauth_client, drop column oauth_client_id, drop column kind`.execute(db);
  await sql`drop table oauth_clients`.execute(db);
}
