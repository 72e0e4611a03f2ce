import type { CreatorKind, ScheduleRow } from '@sdx/db';
import type { Tenant } from '../resources';
import type { Creator } from '../workspaces/creator-revoked';

/** Who a request acts as, as a schedule records its creator: the signed-in user, else the key (an OAuth grant is a key); null for the system. */
export function creatorOf(tenant: Tenant): Creator | null {
  if (tenant.userId) return { kind: 'user', id: tenant.userId };
  if (tenant.keyId) return { kind: 'key', id: tenant.keyId };
  return null;
}

/** The columns that record a creator. */
export function creatorColumns(creator: Creator | null): { created_by_kind: CreatorKind | null; created_by_id: string | null } {
  return { created_by_kind: creator?.kind ?? null, created_by_id: creator?.id ?? null };
}

/** A schedule's recorded creator; null for schedules made before it was recorded. */
export function scheduleCreator(schedule: Pick<ScheduleRow, 'created_by_kind' | 'created_by_id'>): Creator | null {
  return schedule.created_by_kind && schedule.created_by_id ? { kind: schedule.created_by_kind, id: schedule.created_by_id } : null;
}

/**
 * The tenant an automatic run of the schedule is admitted as: its workspace, acting as the key
 * that made the schedule, so the run counts against that key's monthly cap (extensions-3.md
 * 1), as the key's own requests do. A schedule made by a user, or before creators were
 * recorded, acts without a key (the workspace's cap only).
 */
export function runTenant(workspaceTenant: Tenant, schedule: Pick<ScheduleRow, 'created_by_kind' | 'created_by_id'>): Tenant {
  const creator = scheduleCreator(schedule);
  return { ...workspaceTenant, keyId: creator?.kind === 'key' ? creator.id : null };
}
