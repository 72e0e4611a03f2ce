import { sql } from 'kysely';
import type { Db, Executor, Role, SessionRow, WorkspaceRow } from '@sdx/db';
import { newId } from '../ids';
import { isRole } from '../identity/roles';
import { randomToken, tokenHash } from '../identity/secrets';
import type { UserView } from './user-view';

/** The session cookie (extensions.md 1). */
export const SESSION_COOKIE = 'sdx_session';
/** A session ends after 7 days without use, and 30 days after sign-in whatever happens. */
export const SESSION_IDLE_MS = 7 * 24 * 3600_000;
export const SESSION_MAX_MS = 30 * 24 * 3600_000;

export interface ClientMeta {
  ip: string | null;
  userAgent: string | null;
}

export interface StartedSession {
  /** The cookie's value, handed out once: only its hash is stored. */
  token: string;
  session: SessionRow;
}

export async function startSession(db: Executor, userId: string, meta: ClientMeta): Promise<StartedSession> {
  const token = randomToken();
  const session = await db
    .insertInto('sessions')
    .values({
      id: newId('ses'),
      user_id: userId,
      token_hash: tokenHash(token),
      csrf_token: randomToken(),
      expires_at: sql<Date>`now() + ${`${SESSION_MAX_MS / 1000} seconds`}::interval`,
      ip: meta.ip,
      user_agent: meta.userAgent?.slice(0, 512) ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { token, session };
}

/**
 * The session of a sign-in, committed without waiting for the disk (`synchronous_commit = off`
 * for this transaction alone): a sign-in writes nothing else, and if the database crashed in the
 * fraction of a second before the write reached the disk, the user would only sign in again. A
 * sign-in's time then no longer includes the disk's flush, whose tail on a busy or virtual disk
 * is hundreds of milliseconds. Sign-up and verification, which write more than a session, commit
 * durably.
 */
export async function startSignInSession(db: Db, userId: string, meta: ClientMeta): Promise<StartedSession> {
  return db.transaction().execute(async (tx) => {
    await sql`set local synchronous_commit to off`.execute(tx);
    return startSession(tx, userId, meta);
  });
}

/** When a session ends if it is not used again: 7 days after its last use, at most 30 days after sign-in. */
export function sessionExpiresAt(session: Pick<SessionRow, 'last_seen_at' | 'expires_at'>): Date {
  return new Date(Math.min(session.last_seen_at.getTime() + SESSION_IDLE_MS, session.expires_at.getTime()));
}

export interface ResolvedSession {
  session: SessionRow;
  user: UserView;
  /** The workspace asked for (X-Workspace-ID, or the personal one) when the user is a member; else null. */
  workspace: WorkspaceRow | null;
  role: Role | null;
}

interface ResolvedRow {
  id: string;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  ip: string | null;
  user_agent: string | null;
  email: string;
  display_name: string | null;
  avatar_url: string | null;
  two_factor_enabled_at: Date | null;
  role: string | null;
  w_id: string | null;
  w_name: string;
  w_kind: string;
  w_monthly_quota: number;
  w_rate_limit_per_minute: number;
  w_max_result_limit: number;
  w_max_active_jobs: number;
  w_created_at: Date;
  w_personal_user_id: string | null;
  w_require_two_factor: boolean | null;
  w_created_by: string | null;
  w_monthly_credit_cap: number | null;
  w_low_credits_threshold: number | null;
  w_auto_recharge_enabled: boolean | null;
  w_auto_recharge_threshold: number | null;
  w_auto_recharge_pack_id: string | null;
}

/**
 * A live session by its token, with its user and the user's membership in the workspace asked
 * for, in one statement through the unique index on the token's hash. No cache: a session
 * ended on one process fails on every process at its next request.
 */
export async function resolveSession(db: Db, token: string, workspaceId: string | null): Promise<ResolvedSession | null> {
  if (!token || token.length > 200) return null;
  const { rows } = await sql<ResolvedRow>`
    select s.*, u.email, u.display_name, u.avatar_url, u.two_factor_enabled_at, m.role,
           w.id as w_id, w.name as w_name, w.kind as w_kind, w.monthly_quota as w_monthly_quota,
           w.rate_limit_per_minute as w_rate_limit_per_minute, w.max_result_limit as w_max_result_limit,
           w.max_active_jobs as w_max_active_jobs, w.created_at as w_created_at, w.personal_user_id as w_personal_user_id,
           w.require_two_factor as w_require_two_factor, w.created_by as w_created_by,
           w.monthly_credit_cap as w_monthly_credit_cap, w.low_credits_threshold as w_low_credits_threshold,
           w.auto_recharge_enabled as w_auto_recharge_enabled, w.auto_recharge_threshold as w_auto_recharge_threshold,
           w.auto_recharge_pack_id as w_auto_recharge_pack_id
    from sessions s
    join users u on u.id = s.user_id
    left join memberships m
      on m.user_id = s.user_id
     and m.workspace_id = coalesce(${workspaceId}::text, (select pw.id from workspaces pw where pw.personal_user_id = s.user_id))
    left join workspaces w on w.id = m.workspace_id
    where s.token_hash = ${tokenHash(token)}
      and s.ended_at is null
      and s.expires_at > now()
      and s.last_seen_at > now() - ${`${SESSION_IDLE_MS / 1000} seconds`}::interval
  `.execute(db);
  const row = rows[0];
  if (!row) return null;
  const session: SessionRow = {
    id: row.id,
    user_id: row.user_id,
    token_hash: row.token_hash,
    csrf_token: row.csrf_token,
    created_at: row.created_at,
    last_seen_at: row.last_seen_at,
    expires_at: row.expires_at,
    ended_at: row.ended_at,
    ip: row.ip,
    user_agent: row.user_agent,
  };
  const workspace: WorkspaceRow | null = row.w_id
    ? {
        id: row.w_id,
        name: row.w_name,
        kind: row.w_kind,
        monthly_quota: Number(row.w_monthly_quota),
        rate_limit_per_minute: Number(row.w_rate_limit_per_minute),
        max_result_limit: Number(row.w_max_result_limit),
        max_active_jobs: Number(row.w_max_active_jobs),
        created_at: row.w_created_at,
        personal_user_id: row.w_personal_user_id,
        require_two_factor: row.w_require_two_factor === true,
        created_by: row.w_created_by,
        monthly_credit_cap: row.w_monthly_credit_cap === null ? null : Number(row.w_monthly_credit_cap),
        low_credits_threshold: row.w_low_credits_threshold === null ? null : Number(row.w_low_credits_threshold),
        auto_recharge_enabled: row.w_auto_recharge_enabled === true,
        auto_recharge_threshold: row.w_auto_recharge_threshold === null ? null : Number(row.w_auto_recharge_threshold),
        auto_recharge_pack_id: row.w_auto_recharge_pack_id,
      }
    : null;
  return {
    session,
    user: {
      id: row.user_id,
      email: row.email,
      display_name: row.display_name,
      avatar_url: row.avatar_url,
      two_factor_enabled: row.two_factor_enabled_at !== null,
    },
    workspace,
    role: workspace && isRole(row.role) ? row.role : null,
  };
}

/** Records use at most once a minute per session (the idle expiry counts from it). */
export async function touchSession(db: Db, sessionId: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('last_seen_at', '<', sql<Date>`now() - interval '1 minute'`)
    .execute();
}

export async function endSession(db: Executor, sessionId: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ ended_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .execute();
}

/** Ends every session of the user but `keep` (after a password change), or every one (`keep` null: after a reset). */
export async function endOtherSessions(db: Executor, userId: string, keep: string | null): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ ended_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null);
  if (keep) query = query.where('id', '!=', keep);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}
