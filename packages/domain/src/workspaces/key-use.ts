import { sql } from 'kysely';
import type { Db, Executor } from '@sdx/db';

/** Whether a key can still be used: not revoked, not expired (an open stream's periodic check). */
export async function apiKeyActive(db: Executor, keyId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .executeTakeFirst();
  return Boolean(row);
}

/** Records use at most once a minute per key, off the request's critical path. */
export async function touchApiKey(db: Db, keyId: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}
