import { sql } from 'kysely';
import type { Executor } from '@sdx/db';
import { renderApiKey } from './api-keys';

/** One line of a workspace's export: a record of one kind, named by `type`. */
export type WorkspaceRecord = { type: WorkspaceRecordType } & Record<string, unknown>;

export type WorkspaceRecordType = 'workspace' | 'balance' | 'member' | 'invitation' | 'key' | 'job' | 'ledger' | 'audit';

/** Rows one read takes at most: the export streams, whatever the workspace's size. */
export const EXPORT_PAGE_SIZE = 1000;

/** Columns never exported: secrets and their hashes, and the attempt machinery of a job. */
const HIDDEN: Record<string, readonly string[]> = {
  invitations: ['token_hash'],
  jobs: ['lease_token', 'checkpoint_cursor', 'deployment', 'enqueued_at', 'queue_entry', 'queue_priority'],
};

/**
 * What the service holds of a workspace, as the records of its export (the admin CLI's
 * export-workspace, one JSON object per line): the workspace itself (its settings and limits)
 * and its credit balances; its members (with each user's email and name) and pending
 * invitations; its keys (API keys and OAuth grants: never a secret or a hash, only the key's
 * public prefix); its jobs (their requests, state, errors and charges, not the result items,
 * which the API's exports deliver); its credit ledger; its audit log. Each kind in the order of
 * its IDs (oldest first), read a page at a time. Dates are ISO 8601.
 *
 * Yields nothing when there is no such workspace.
 */
export async function* exportWorkspace(db: Executor, workspaceId: string): AsyncGenerator<WorkspaceRecord> {
  const workspace = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
  if (!workspace) return;
  yield record('workspace', workspace);
  const balances = await db
    .selectFrom('credit_balances')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('period_start')
    .execute();
  for (const balance of balances) yield record('balance', balance);
  const members = await db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.user_id', 'users.email', 'users.display_name', 'memberships.role', 'memberships.created_at as joined_at'])
    .where('memberships.workspace_id', '=', workspaceId)
    .orderBy('memberships.created_at')
    .execute();
  for (const member of members) yield record('member', member);
  for await (const row of pages(db, 'invitations', workspaceId)) yield record('invitation', row, HIDDEN.invitations);
  const keys = await db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
  for (const key of keys) {
    const { month_spent_credits: _spent, ...shown } = renderApiKey(key);
    yield record('key', { ...shown, oauth_client_id: key.oauth_client_id });
  }
  for await (const row of pages(db, 'jobs', workspaceId)) yield record('job', row, HIDDEN.jobs);
  for await (const row of pages(db, 'credit_ledger', workspaceId)) yield record('ledger', row);
  for await (const row of pages(db, 'audit_events', workspaceId)) yield record('audit', row);
}

/** The export as NDJSON lines (each ends with a newline). */
export async function* exportWorkspaceLines(db: Executor, workspaceId: string): AsyncGenerator<string> {
  for await (const r of exportWorkspace(db, workspaceId)) yield `${JSON.stringify(r)}\n`;
}

type PagedTable = 'invitations' | 'jobs' | 'credit_ledger' | 'audit_events';

/** A table's rows of the workspace, by ID, a page at a time (keyset: no offset scans). */
async function* pages(db: Executor, table: PagedTable, workspaceId: string): AsyncGenerator<Record<string, unknown>> {
  let after: string | null = null;
  for (;;) {
    const { rows }: { rows: Array<Record<string, unknown>> } = await sql<Record<string, unknown>>`
      select * from ${sql.table(table)}
      where workspace_id = ${workspaceId} and (${after}::text is null or id::text > ${after}::text)
      order by id::text
      limit ${EXPORT_PAGE_SIZE}
    `.execute(db);
    for (const row of rows) yield row;
    if (rows.length < EXPORT_PAGE_SIZE) return;
    after = String(rows[rows.length - 1].id);
  }
}

function record(type: WorkspaceRecordType, row: object, hidden: readonly string[] = []): WorkspaceRecord {
  const out: WorkspaceRecord = { type };
  for (const [name, value] of Object.entries(row)) {
    if (hidden.includes(name)) continue;
    out[name] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}
