import type { DestinationRow, Executor } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import type { Resources, Tenant } from '../resources';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { sealerOf } from '../sealing';
import { checkBucket } from './bucket';

/**
 * A workspace's destinations (extensions-2.md 5): buckets that jobs, batches and schedules name
 * in `destination_id`, so that a job's export (a batch's) is written there when it ends. The
 * secret access key is sealed at rest (AES-256-GCM under SECRETS_KEY) and never answered.
 */

export type DestinationFormat = DestinationRow['format'];

/** The body of POST /v1/destinations, as validated by the schema. */
export interface DestinationInput {
  name: string;
  type: 's3';
  bucket: string;
  prefix?: string;
  region?: string;
  endpoint?: string | null;
  force_path_style?: boolean;
  access_key_id: string;
  secret_access_key: string;
  format?: DestinationFormat;
}

export const DEFAULT_DESTINATION_FORMAT: DestinationFormat = 'ndjson';
export const DEFAULT_DESTINATION_REGION = 'us-east-1';

/** A destination as the API shows it: never its secret access key. */
export function renderDestination(row: DestinationRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    bucket: row.bucket,
    prefix: row.prefix,
    region: row.region,
    endpoint: row.endpoint,
    force_path_style: row.force_path_style,
    access_key_id: row.access_key_id,
    format: row.format,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * POST /v1/destinations: the bucket is checked first (a check object written and deleted; a
 * custom endpoint through the webhook URL rules), then the destination (its secret sealed) and
 * its audit event are stored in one transaction.
 */
export async function createDestination(
  services: Resources,
  tenant: Tenant,
  input: DestinationInput,
  actor: Actor,
): Promise<DestinationRow> {
  const prefix = input.prefix ?? '';
  const region = input.region ?? DEFAULT_DESTINATION_REGION;
  const endpoint = input.endpoint ?? null;
  const forcePathStyle = input.force_path_style ?? false;
  await checkBucket(
    services,
    { bucket: input.bucket, region, endpoint, forcePathStyle, accessKeyId: input.access_key_id, secretAccessKey: input.secret_access_key },
    prefix,
  );
  return services.db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('destinations')
      .values({
        id: newId('dst'),
        workspace_id: tenant.workspace.id,
        name: input.name,
        type: input.type,
        bucket: input.bucket,
        prefix,
        region,
        endpoint,
        force_path_style: forcePathStyle,
        access_key_id: input.access_key_id,
        secret_access_key: sealerOf(services.config).seal(input.secret_access_key),
        format: input.format ?? DEFAULT_DESTINATION_FORMAT,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'destination.created',
      actor,
      targetType: 'destination',
      targetId: row.id,
      data: { name: row.name, bucket: row.bucket, prefix: row.prefix, endpoint: row.endpoint, format: row.format },
    });
    return row;
  });
}

/** The workspace's destinations, newest first. */
export async function listDestinations(db: Executor, tenant: Tenant): Promise<DestinationRow[]> {
  return db.selectFrom('destinations').selectAll().where('workspace_id', '=', tenant.workspace.id).orderBy('id', 'desc').execute();
}

function notFound(destinationId: string): ApiError {
  return new ApiError('destination_not_found', `No destination ${destinationId} in this workspace.`, { destination_id: destinationId });
}

export async function getDestinationOrThrow(db: Executor, tenant: Tenant, destinationId: string, lock = false): Promise<DestinationRow> {
  let query = db.selectFrom('destinations').selectAll().where('id', '=', destinationId).where('workspace_id', '=', tenant.workspace.id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound(destinationId);
  return row;
}

/**
 * DELETE /v1/destinations/{id}: the destination goes, schedules that named it go on without one,
 * and its audit event is written, in one transaction. Deliveries still pending to it fail at
 * their next attempt; objects already written stay in the bucket.
 */
export async function deleteDestination(services: Resources, tenant: Tenant, destinationId: string, actor: Actor): Promise<void> {
  await services.db.transaction().execute(async (tx) => {
    const row = await getDestinationOrThrow(tx, tenant, destinationId, true);
    await tx
      .updateTable('schedules')
      .set({ destination_id: null })
      .where('workspace_id', '=', tenant.workspace.id)
      .where('destination_id', '=', row.id)
      .execute();
    await tx.deleteFrom('destinations').where('id', '=', row.id).execute();
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'destination.deleted',
      actor,
      targetType: 'destination',
      targetId: row.id,
      data: { name: row.name, bucket: row.bucket },
    });
  });
}

/** What a job or batch submitted with a destination records: the destination and the object key. */
export interface SubmissionDelivery {
  destinationId: string;
  key: string;
}

/** The object key of a job's or batch's export: `{prefix}{id}.{ext}`, the extension the format's name. */
export function deliveryKey(destination: Pick<DestinationRow, 'prefix' | 'format'>, subjectId: string): string {
  return `${destination.prefix}${subjectId}.${destination.format}`;
}

/**
 * The delivery of a submission naming `destinationId` (job or batch `subjectId`); 404
 * destination_not_found unless it is a destination of the workspace. Null without one.
 */
export async function submissionDelivery(
  db: Executor,
  tenant: Tenant,
  destinationId: string | null | undefined,
  subjectId: string,
): Promise<SubmissionDelivery | null> {
  if (destinationId === null || destinationId === undefined) return null;
  const destination = await getDestinationOrThrow(db, tenant, destinationId);
  return { destinationId: destination.id, key: deliveryKey(destination, subjectId) };
}

/** Checks that a schedule's destination is one of the workspace's (404 destination_not_found). */
export async function checkScheduleDestination(db: Executor, tenant: Tenant, destinationId: string | null | undefined): Promise<void> {
  if (destinationId !== null && destinationId !== undefined) await getDestinationOrThrow(db, tenant, destinationId);
}
