import { nextOccurrence } from '@sdx/recurrence';
import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { recordAudit, actorOf } from '../audit/audit';
import { sql } from 'kysely';
import type { Tx } from '@sdx/db';
import { creatorColumns, creatorOf, scheduleCreator } from './creator';
import { recurrenceOf } from './definition';
import { lockScheduleOrThrow, type ScheduleView, scheduleViewsOf } from './queries';

/**
 * POST /v1/schedules/{id}/resume: automatic dispatch restarts. next_run_at moves to the first
 * occurrence that is not in the past, so occurrences missed while paused are not run. Resuming
 * an active schedule changes nothing. A completed schedule, or a once schedule whose only
 * occurrence passed while it was paused, cannot be resumed (400 invalid_request): replace its
 * starts_at with PUT instead.
 *
 * A schedule whose creator's access has ended (paused with `paused_reason: creator_revoked`,
 * or paused by a person before its creator's key was revoked or its creator left) is taken
 * over by whoever resumes it: created_by becomes the caller (audited
 * `schedule.creator_changed`), so its runs never spend again in the name of a revoked key.
 */
export async function resumeSchedule(services: Services, tenant: Tenant, scheduleId: string): Promise<ScheduleView> {
  const now = services.clock.now();
  const schedule = await services.db.transaction().execute(async (tx) => {
    const current = await lockScheduleOrThrow(tx, tenant, scheduleId);
    if (current.status === 'active') return current;
    const nextRunAt =
      current.status === 'paused' && current.next_run_at && current.next_run_at.getTime() >= now.getTime()
        ? current.next_run_at
        : current.status === 'paused'
          ? nextOccurrence(recurrenceOf(current), now, { inclusive: true })
          : null;
    if (nextRunAt === null) {
      throw new ApiError(
        'invalid_request',
        current.status === 'completed'
          ? `Schedule ${current.id} has completed its only run; it cannot be resumed.`
          : `The only occurrence of schedule ${current.id} has passed; set a new starts_at with PUT to run it again.`,
        { schedule_id: current.id, status: current.status },
      );
    }
    const creator = scheduleCreator(current);
    const takeOver =
      current.paused_reason === 'creator_revoked' || (creator !== null && !(await creatorLive(tx, current.workspace_id, creator)));
    if (takeOver) {
      const next = creatorOf(tenant);
      await recordAudit(tx, {
        workspaceId: current.workspace_id,
        action: 'schedule.creator_changed',
        actor: actorOf(tenant, null),
        targetType: 'schedule',
        targetId: current.id,
        data: { name: current.name, from: creator, to: next },
      });
    }
    return tx
      .updateTable('schedules')
      .set({
        status: 'active',
        next_run_at: nextRunAt,
        paused_reason: null,
        ...(takeOver ? creatorColumns(creatorOf(tenant)) : {}),
        updated_at: now,
      })
      .where('id', '=', current.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return (await scheduleViewsOf(services.db, [schedule]))[0];
}

/** Whether a creator may still act in the workspace: a live key of it, or a member. */
async function creatorLive(tx: Tx, workspaceId: string, creator: { kind: 'user' | 'key'; id: string }): Promise<boolean> {
  if (creator.kind === 'user') {
    return Boolean(
      await tx
        .selectFrom('memberships')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', creator.id)
        .executeTakeFirst(),
    );
  }
  const key = await tx
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', creator.id)
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
  return Boolean(key);
}
