import { sql } from 'kysely';
import type { Executor, Role, Tx, WorkspaceRow } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import type { Services } from '../context';
import { ApiError } from '../errors';
import type { Tenant } from '../resources';
import { createWorkspace } from './workspaces';

/** The Workspace object of api-v1.md 2.1: the caller's role in it. */
export interface WorkspaceView {
  id: string;
  name: string;
  kind: 'personal' | 'team';
  role: Role;
  require_two_factor: boolean;
}

export function renderWorkspace(workspace: Pick<WorkspaceRow, 'id' | 'name' | 'kind' | 'require_two_factor'>, role: Role): WorkspaceView {
  return {
    id: workspace.id,
    name: workspace.name,
    kind: workspace.kind === 'personal' ? 'personal' : 'team',
    role,
    require_two_factor: workspace.require_two_factor,
  };
}

/** Every workspace the user belongs to: the personal one first, then the others by age. */
export async function listUserWorkspaces(db: Executor, userId: string): Promise<WorkspaceView[]> {
  const rows = await db
    .selectFrom('memberships')
    .innerJoin('workspaces', 'workspaces.id', 'memberships.workspace_id')
    .select(['workspaces.id', 'workspaces.name', 'workspaces.kind', 'workspaces.require_two_factor', 'memberships.role'])
    .where('memberships.user_id', '=', userId)
    .orderBy((eb) => eb.case().when('workspaces.kind', '=', 'personal').then(0).else(1).end())
    .orderBy('workspaces.id')
    .execute();
  return rows.map((row) => renderWorkspace(row, row.role));
}

/**
 * The workspace the console opens after sign-in when the browser has not chosen one: the user's
 * default_workspace_id while they are still a member of it, else null (the personal one).
 */
export async function defaultWorkspaceOf(db: Executor, userId: string, workspaces: readonly WorkspaceView[]): Promise<string | null> {
  const row = await db.selectFrom('users').select('default_workspace_id').where('id', '=', userId).executeTakeFirst();
  return defaultWorkspaceAmong(row?.default_workspace_id ?? null, workspaces);
}

/** defaultWorkspaceOf for a caller that has the user's row already: its default while still among `workspaces`. */
export function defaultWorkspaceAmong(defaultId: string | null, workspaces: readonly WorkspaceView[]): string | null {
  return defaultId && workspaces.some((w) => w.id === defaultId) ? defaultId : null;
}

/** Sets (or clears, with null) the workspace the console opens after sign-in for the user. */
export async function setDefaultWorkspace(db: Executor, userId: string, workspaceId: string | null): Promise<void> {
  await db.updateTable('users').set({ default_workspace_id: workspaceId }).where('id', '=', userId).execute();
}

/**
 * Locks the workspace against concurrent membership changes (FOR NO KEY UPDATE, which does not
 * block the inserts of jobs and other rows that reference it). 404 when it does not exist.
 */
export async function lockWorkspace(tx: Tx, workspaceId: string): Promise<WorkspaceRow> {
  const workspace = await tx.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).forNoKeyUpdate().executeTakeFirst();
  if (!workspace) throw new ApiError('workspace_not_found', 'No such workspace among yours.', { workspace_id: workspaceId });
  return workspace;
}

/**
 * POST /v1/workspaces: a team workspace, its creator the owner and its created_by, the plan
 * allowance NEW_TEAM_WORKSPACE_CREDITS (default 0: credits come from billing or the admin CLI,
 * never from creating workspaces). A user may have made at most MAX_TEAM_WORKSPACES_PER_USER team
 * workspaces that still exist, else 403 workspace_limit_reached. The user's row is locked (FOR NO
 * KEY UPDATE: it serializes this function per user without blocking rows that reference the
 * user) before the count, so concurrent requests cannot both pass the last slot.
 */
export async function createTeamWorkspace(services: Services, userId: string, name: string, actor: Actor): Promise<WorkspaceView> {
  const limit = services.config.maxTeamWorkspacesPerUser;
  return services.db.transaction().execute(async (tx) => {
    await tx.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().executeTakeFirstOrThrow();
    const made = await tx
      .selectFrom('workspaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('created_by', '=', userId)
      .where('kind', '=', 'team')
      .executeTakeFirstOrThrow();
    if (Number(made.n) >= limit) {
      throw new ApiError('workspace_limit_reached', `You have made ${limit} team workspaces, the most one user may have.`, { limit });
    }
    const workspace = await createWorkspace(tx, services.clock, {
      name,
      kind: 'team',
      credits: services.config.newTeamWorkspaceCredits,
      createdBy: userId,
    });
    await tx.insertInto('memberships').values({ workspace_id: workspace.id, user_id: userId, role: 'owner' }).execute();
    await recordAudit(tx, {
      workspaceId: workspace.id,
      action: 'workspace.created',
      actor,
      targetType: 'workspace',
      targetId: workspace.id,
      data: { name },
    });
    return renderWorkspace(workspace, 'owner');
  });
}

export interface WorkspaceUpdate {
  name?: string;
  requireTwoFactor?: boolean;
}

/**
 * PATCH /v1/workspaces/{id} (owner): renames the workspace and/or turns require_two_factor on or
 * off, each change audited. Turning it on needs two-factor sign-in on the caller's own account,
 * else 409 two_factor_required; an API key has no account to show it, so it can turn the rule
 * off but not on.
 */
export async function updateWorkspace(services: Services, tenant: Tenant, input: WorkspaceUpdate, actor: Actor): Promise<WorkspaceView> {
  const workspaceId = tenant.workspace.id;
  return services.db.transaction().execute(async (tx) => {
    const before = await lockWorkspace(tx, workspaceId);
    const name = input.name ?? before.name;
    const requireTwoFactor = input.requireTwoFactor ?? before.require_two_factor;
    if (requireTwoFactor && !before.require_two_factor) await assertOwnTwoFactor(tx, tenant.userId);
    const workspace = await tx
      .updateTable('workspaces')
      .set({ name, require_two_factor: requireTwoFactor })
      .where('id', '=', workspaceId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (before.name !== name) {
      await recordAudit(tx, {
        workspaceId,
        action: 'workspace.renamed',
        actor,
        targetType: 'workspace',
        targetId: workspaceId,
        data: { from: before.name, to: name },
      });
    }
    if (before.require_two_factor !== requireTwoFactor) {
      await recordAudit(tx, {
        workspaceId,
        action: 'workspace.two_factor_changed',
        actor,
        targetType: 'workspace',
        targetId: workspaceId,
        data: { require_two_factor: requireTwoFactor },
      });
    }
    return renderWorkspace(workspace, tenant.role as Role);
  });
}

async function assertOwnTwoFactor(tx: Tx, userId: string | null | undefined): Promise<void> {
  const user = userId
    ? await tx.selectFrom('users').select('two_factor_enabled_at').where('id', '=', userId).executeTakeFirst()
    : undefined;
  if (!user?.two_factor_enabled_at) {
    throw new ApiError(
      'two_factor_required',
      'Turn on two-factor sign-in on your own account (signed in, POST /v1/auth/2fa/setup) before requiring it of the workspace.',
      {},
      {},
      409,
    );
  }
}

export interface WorkspaceSummary {
  id: string;
  name: string;
  kind: string;
  created_at: string;
  owners: string[];
  member_count: number;
  active_key_count: number;
}

/** Every workspace with its owners' emails and counts, oldest first: for an operator (admin CLI list-workspaces). */
export async function listAllWorkspaces(db: Executor): Promise<WorkspaceSummary[]> {
  const rows = await db
    .selectFrom('workspaces')
    .select((eb) => [
      'workspaces.id',
      'workspaces.name',
      'workspaces.kind',
      'workspaces.created_at',
      eb
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select((e) => e.fn.coalesce(e.fn.agg<string[]>('array_agg', ['users.email']), sql<string[]>`'{}'`).as('emails'))
        .whereRef('memberships.workspace_id', '=', 'workspaces.id')
        .where('memberships.role', '=', 'owner')
        .as('owners'),
      eb
        .selectFrom('memberships')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('memberships.workspace_id', '=', 'workspaces.id')
        .as('member_count'),
      eb
        .selectFrom('api_keys')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('api_keys.workspace_id', '=', 'workspaces.id')
        .where('api_keys.revoked_at', 'is', null)
        .where((e) => e.or([e('api_keys.expires_at', 'is', null), e('api_keys.expires_at', '>', sql<Date>`now()`)]))
        .as('active_key_count'),
    ])
    .orderBy('workspaces.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    kind: row.kind,
    created_at: row.created_at.toISOString(),
    owners: row.owners ?? [],
    member_count: Number(row.member_count ?? 0),
    active_key_count: Number(row.active_key_count ?? 0),
  }));
}
