import type { ActorType, AuditEventRow, Executor, Tx } from '@sdx/db';
import type { Tenant } from '../resources';
import { newId } from '../ids';

/** Who made a change: a signed-in user, an API key, or the system (admin CLI, first start). */
export interface Actor {
  type: ActorType;
  id: string | null;
  /** The client address of the request; null outside HTTP. */
  ip: string | null;
}

export const systemActor = (id: string): Actor => ({ type: 'system', id, ip: null });

/** The actor of a request: its user when signed in, else its API key. */
export function actorOf(tenant: Tenant, ip: string | null): Actor {
  if (tenant.userId) return { type: 'user', id: tenant.userId, ip };
  if (tenant.keyId) return { type: 'api_key', id: tenant.keyId, ip };
  return { type: 'system', id: null, ip };
}

/** Every action the audit log records (extensions.md 4). */
export type AuditAction =
  | 'user.signed_up'
  | 'user.email_verified'
  | 'user.password_reset'
  | 'user.password_reset_link_issued'
  | 'user.two_factor_enabled'
  | 'user.two_factor_disabled'
  | 'workspace.two_factor_changed'
  | 'workspace.created'
  | 'workspace.renamed'
  | 'member.invited'
  | 'member.joined'
  | 'member.role_changed'
  | 'member.removed'
  | 'invitation.revoked'
  | 'schedule.paused'
  | 'schedule.creator_changed'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'api_key.updated'
  | 'credits.granted'
  | 'webhook.created'
  | 'destination.created'
  | 'destination.deleted'
  | 'webhook.updated'
  | 'webhook.deleted'
  | 'webhook.secret_rotated'
  | 'billing.checkout_created'
  | 'billing.auto_recharge_updated'
  | 'billing.limits_updated'
  | 'billing.subscription_checkout_created'
  | 'billing.subscription_changed'
  | 'billing.subscription_cancelled'
  | 'billing.plan_changed'
  | 'billing.auto_recharge_disabled'
  | 'billing.payment_refunded'
  | 'billing.payment_disputed'
  | 'billing.dispute_closed'
  | 'monitor.paused';

export interface AuditEntry {
  workspaceId: string;
  action: AuditAction;
  actor: Actor;
  targetType: string | null;
  targetId: string | null;
  data?: Record<string, unknown>;
}

/**
 * Appends an event. It takes a transaction, so the event commits or rolls back with the change
 * it records; the table refuses updates and deletes.
 */
export async function recordAudit(tx: Tx, entry: AuditEntry): Promise<void> {
  await tx
    .insertInto('audit_events')
    .values({
      id: newId('aud'),
      workspace_id: entry.workspaceId,
      action: entry.action,
      actor_type: entry.actor.type,
      actor_id: entry.actor.id,
      target_type: entry.targetType,
      target_id: entry.targetId,
      data: JSON.stringify(entry.data ?? {}),
      ip: entry.actor.ip,
    })
    .execute();
}

export interface AuditPage {
  limit: number;
  startingAfter?: string | null;
}

/** A workspace's events, newest first; `startingAfter` (an event ID) continues with older ones. */
export async function listAuditEvents(db: Executor, workspaceId: string, page: AuditPage): Promise<AuditEventRow[]> {
  let query = db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId);
  if (page.startingAfter) query = query.where('id', '<', page.startingAfter);
  return query.orderBy('id', 'desc').limit(page.limit).execute();
}

export function renderAuditEvent(row: AuditEventRow) {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id },
    target_type: row.target_type,
    target_id: row.target_id,
    data: (row.data ?? {}) as Record<string, unknown>,
    ip: row.ip,
    created_at: row.created_at.toISOString(),
  };
}
