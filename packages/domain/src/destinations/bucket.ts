import { randomBytes } from 'node:crypto';
import type { DestinationRow } from '@sdx/db';
import { ObjectStore } from '@sdx/storage';
import { AddressRefused, guardedLookup } from '@sdx/webhooks';
import type { Resources } from '../resources';
import { ApiError } from '../errors';
import { sealerOf } from '../sealing';

/**
 * A destination's bucket, opened for one check or one delivery. A custom endpoint passes the
 * webhook URL rules (extensions.md 5, the same WEBHOOK_ALLOW_HTTP and
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS): its scheme and every address its host resolves to are checked
 * before each use, and the connections resolve names through the guard's lookup, so they only
 * reach addresses it checked. AWS itself (no endpoint) needs no check.
 */

/** Where a destination writes and how it signs in, its secret in clear (never stored so). */
export interface BucketTarget {
  bucket: string;
  region: string;
  endpoint: string | null;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/** A destination's check write waits at most this long for each request. */
const CHECK_TIMEOUT_MS = 5_000;

/** The bucket of a stored destination, its secret opened from its sealed form. */
export function targetOf(config: Resources['config'], row: DestinationRow): BucketTarget {
  return {
    bucket: row.bucket,
    region: row.region,
    endpoint: row.endpoint,
    forcePathStyle: row.force_path_style,
    accessKeyId: row.access_key_id,
    secretAccessKey: sealerOf(config).open(row.secret_access_key),
  };
}

/** The bucket as an ObjectStore, its endpoint checked first; throws AddressRefused when refused. */
export async function openBucket(services: Resources, target: BucketTarget, timeoutMs?: number): Promise<ObjectStore> {
  if (target.endpoint !== null) await services.webhooks.checkUrl(target.endpoint);
  return ObjectStore.of({
    bucket: target.bucket,
    region: target.region,
    endpoint: target.endpoint,
    forcePathStyle: target.forcePathStyle,
    accessKeyId: target.accessKeyId,
    secretAccessKey: target.secretAccessKey,
    timeoutMs,
    lookup: target.endpoint !== null ? guardedLookup(services.webhooks.policy) : undefined,
  });
}

/**
 * The check of POST /v1/destinations: a small object written under the prefix, then deleted.
 * Any failure (a refused endpoint, a wrong key, a missing bucket, no answer) is 422
 * destination_unreachable with the store's message.
 */
export async function checkBucket(services: Resources, target: BucketTarget, prefix: string): Promise<void> {
  const unreachable = (message: string) =>
    new ApiError('destination_unreachable', message, { bucket: target.bucket, endpoint: target.endpoint });
  let store: ObjectStore;
  try {
    store = await openBucket(services, target, CHECK_TIMEOUT_MS);
  } catch (error) {
    if (!(error instanceof AddressRefused)) throw error;
    const hint =
      error.setting && services.config.nodeEnv !== 'production'
        ? ` (for local development, start the service with ${error.setting}=1 to allow it)`
        : '';
    throw unreachable(`This endpoint cannot be used: ${error.message.replace('webhooks may', 'destinations may')}${hint}.`);
  }
  const key = `${prefix}.sdx-check-${randomBytes(8).toString('hex')}`;
  try {
    await store.put(key, 'A check of the destination; deleted at once.\n', 'text/plain');
    await store.delete([key]);
  } catch (error) {
    throw unreachable(`The destination could not be written to: ${(error as Error).message}`);
  } finally {
    store.close();
  }
}
