import { Transaction } from 'kysely';
import type { Executor, Tx } from '@sdx/db';

/** Runs `work` in the caller's transaction when `db` is one, else in a transaction of its own. */
export function inTransaction<T>(db: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (db instanceof Transaction) return work(db);
  return db.transaction().execute(work);
}
