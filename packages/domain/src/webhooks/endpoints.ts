import { sql } from 'kysely';
import type { Executor, WebhookRow } from '@sdx/db';
import { AddressRefused, generateSecret } from '@sdx/webhooks';
import { type Actor, recordAudit } from '../audit/audit';
import type { Resources, Tenant } from '../resources';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { sealerOf } from '../sealing';

/** How long the secret before a rotation keeps signing beside the new one (extensions.md 5). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** A webhook as the API shows it: never its secret (which only its creation and rotation answer). */
export function renderWebhook(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
  };
}

/** The URL checked (scheme, then every address it resolves to); 422 invalid_webhook_url otherwise. */
async function checkUrl(services: Resources, url: string): Promise<void> {
  try {
    await services.webhooks.checkUrl(url);
  } catch (error) {
    if (!(error instanceof AddressRefused)) throw error;
    // Outside production, name the setting that allows such a URL for local development.
    const hint =
      error.setting && services.config.nodeEnv !== 'production'
        ? ` (for local development, start the service with ${error.setting}=1 to allow it)`
        : '';
    throw new ApiError('invalid_webhook_url', `This URL cannot receive webhooks: ${error.message}${hint}.`, { url });
  }
}

/** Duplicates in `events` are dropped; `*` takes everything, so it stands alone. */
function eventList(events: string[]): string[] {
  const unique = [...new Set(events)];
  return unique.includes('*') ? ['*'] : unique;
}

/**
 * A webhook with its signing secret in clear, for the one answer that shows it (creation,
 * rotation). The row holds it sealed (AES-256-GCM under SECRETS_KEY, `sealing.ts`).
 */
export interface WebhookWithSecret {
  webhook: WebhookRow;
  secret: string;
}

/**
 * POST /v1/webhooks: the endpoint, its secret (sealed; answered once) and its audit event, in
 * one transaction. At most MAX_WEBHOOKS_PER_WORKSPACE per workspace (422
 * webhook_limit_reached): the workspace row is locked before the count, so two creations at once
 * cannot both pass it.
 */
export async function createWebhook(services: Resources, tenant: Tenant, input: WebhookInput, actor: Actor): Promise<WebhookWithSecret> {
  await checkUrl(services, input.url);
  const secret = generateSecret();
  const limit = services.config.maxWebhooksPerWorkspace;
  return services.db.transaction().execute(async (tx) => {
    await tx.selectFrom('workspaces').select('id').where('id', '=', tenant.workspace.id).forUpdate().executeTakeFirstOrThrow();
    const { count } = await tx
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('workspace_id', '=', tenant.workspace.id)
      .executeTakeFirstOrThrow();
    if (Number(count) >= limit) {
      throw new ApiError('webhook_limit_reached', `This workspace has ${limit} webhooks, the most it may have; delete one first.`, {
        limit,
      });
    }
    const row = await tx
      .insertInto('webhooks')
      .values({
        id: newId('whk'),
        workspace_id: tenant.workspace.id,
        url: input.url,
        description: input.description ?? null,
        events: eventList(input.events),
        secret: sealerOf(services.config).seal(secret),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'webhook.created',
      actor,
      targetType: 'webhook',
      targetId: row.id,
      data: { url: row.url, events: row.events, description: row.description },
    });
    return { webhook: row, secret };
  });
}

/** The workspace's webhooks, newest first. */
export async function listWebhooks(db: Executor, tenant: Tenant): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('workspace_id', '=', tenant.workspace.id).orderBy('id', 'desc').execute();
}

export async function getWebhookOrThrow(db: Executor, tenant: Tenant, webhookId: string, lock = false): Promise<WebhookRow> {
  let query = db.selectFrom('webhooks').selectAll().where('id', '=', webhookId).where('workspace_id', '=', tenant.workspace.id);
  if (lock) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw new ApiError('webhook_not_found', `No webhook ${webhookId} in this workspace.`, { webhook_id: webhookId });
  return row;
}

/** PATCH /v1/webhooks/{id}: a new URL is checked like a new webhook's; the change and its audit event commit together. */
export async function updateWebhook(
  services: Resources,
  tenant: Tenant,
  webhookId: string,
  changes: WebhookChanges,
  actor: Actor,
): Promise<WebhookRow> {
  if (changes.url !== undefined) await checkUrl(services, changes.url);
  return services.db.transaction().execute(async (tx) => {
    const before = await getWebhookOrThrow(tx, tenant, webhookId, true);
    const row = await tx
      .updateTable('webhooks')
      .set({
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.events !== undefined ? { events: eventList(changes.events) } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const changed = (['url', 'events', 'description', 'enabled'] as const).filter((key) => changes[key] !== undefined);
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'webhook.updated',
      actor,
      targetType: 'webhook',
      targetId: row.id,
      data: Object.fromEntries(changed.map((key) => [key, row[key]])),
    });
    return row;
  });
}

/** DELETE /v1/webhooks/{id}: the endpoint and its delivery log go; nothing more is sent to it. */
export async function deleteWebhook(services: Resources, tenant: Tenant, webhookId: string, actor: Actor): Promise<void> {
  await services.db.transaction().execute(async (tx) => {
    const row = await getWebhookOrThrow(tx, tenant, webhookId, true);
    await tx.deleteFrom('webhook_deliveries').where('webhook_id', '=', row.id).execute();
    await tx.deleteFrom('webhooks').where('id', '=', row.id).execute();
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'webhook.deleted',
      actor,
      targetType: 'webhook',
      targetId: row.id,
      data: { url: row.url },
    });
  });
}

/**
 * POST /v1/webhooks/{id}/rotate-secret: a new secret signs from now on, answered once; the one
 * it replaces signs beside it for 24 hours, so a receiver can switch without missing a message.
 * (A second rotation within those hours retires the oldest at once.)
 */
export async function rotateWebhookSecret(
  services: Resources,
  tenant: Tenant,
  webhookId: string,
  actor: Actor,
): Promise<WebhookWithSecret> {
  const secret = generateSecret();
  return services.db.transaction().execute(async (tx) => {
    const before = await getWebhookOrThrow(tx, tenant, webhookId, true);
    const now = services.clock.now();
    const row = await tx
      .updateTable('webhooks')
      .set({
        secret: sealerOf(services.config).seal(secret),
        // Still sealed as it was (under whichever key: rotate-secrets re-seals it if need be).
        previous_secret: before.secret,
        previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
        updated_at: now,
      })
      .where('id', '=', before.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: tenant.workspace.id,
      action: 'webhook.secret_rotated',
      actor,
      targetType: 'webhook',
      targetId: row.id,
      data: { previous_secret_expires_at: row.previous_secret_expires_at!.toISOString() },
    });
    return { webhook: row, secret };
  });
}

/**
 * The secrets that sign a message sent at `now`, opened from their sealed form: the current one,
 * and the previous one while its overlap lasts.
 */
export function signingSecrets(
  config: Resources['config'],
  row: Pick<WebhookRow, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  now: Date,
): string[] {
  const sealer = sealerOf(config);
  const previous = row.previous_secret && row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > now.getTime();
  return previous ? [sealer.open(row.secret), sealer.open(row.previous_secret!)] : [sealer.open(row.secret)];
}
