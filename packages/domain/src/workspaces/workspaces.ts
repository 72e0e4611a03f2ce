import type { Executor, Tx, WorkspaceRow } from '@sdx/db';
import { newId } from '../ids';
import { openBalance } from '../credits/grants';
import type { Clock } from '../time';

export interface CreateWorkspaceOptions {
  name: string;
  /** Monthly plan allowance in credits (monthly_quota = credit_limit). */
  credits?: number;
  rateLimitPerMinute?: number;
  maxActiveJobs?: number;
  maxResultLimit?: number;
  /** `team` (default) or `personal`, the one workspace of `personalUserId`. */
  kind?: 'team' | 'personal';
  personalUserId?: string | null;
  /** The user who made a team workspace (the bound on team workspaces per user counts it). */
  createdBy?: string | null;
}

/** Plan defaults of a new workspace; the admin CLI can override each. */
export const WORKSPACE_DEFAULTS = {
  credits: 10_000,
  rateLimitPerMinute: 600,
  maxActiveJobs: 200,
  maxResultLimit: 25_000,
} as const;

export async function createWorkspace(tx: Tx, clock: Clock, options: CreateWorkspaceOptions): Promise<WorkspaceRow> {
  const workspace = await tx
    .insertInto('workspaces')
    .values({
      id: newId('ws'),
      name: options.name,
      monthly_quota: options.credits ?? WORKSPACE_DEFAULTS.credits,
      rate_limit_per_minute: options.rateLimitPerMinute ?? WORKSPACE_DEFAULTS.rateLimitPerMinute,
      max_active_jobs: options.maxActiveJobs ?? WORKSPACE_DEFAULTS.maxActiveJobs,
      max_result_limit: options.maxResultLimit ?? WORKSPACE_DEFAULTS.maxResultLimit,
      kind: options.kind ?? 'team',
      personal_user_id: options.personalUserId ?? null,
      created_by: options.createdBy ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await openBalance(tx, workspace, clock.now());
  return workspace;
}

export async function findWorkspace(db: Executor, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countWorkspaces(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('workspaces')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
