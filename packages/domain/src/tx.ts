import { Transaction } from 'kysely';
import type { Executor, Tx } from '@sdx/db';

/** Runs `work` in the caller's transaction when `db` is one, else in a transaction of its own. */
export function inTransaction<T>(db: Executor, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (db instanceof Transaction) return work(db);
  return db.transaction().execute(work);
}

/**
 * Runs a transaction again when Postgres picks it as a deadlock victim (SQLSTATE 40P01), up to 3
 * times in all; `what` names it in the warning. Any other failure is thrown at once.
 */
export async function retryDeadlocks<T>(log: { warn(obj: object, msg: string): void }, what: string, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 3) throw error;
      log.warn({ attempt }, `${what} chosen as deadlock victim; retrying`);
    }
  }
}
