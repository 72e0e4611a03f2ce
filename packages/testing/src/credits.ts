/**
 * Credit operations at the level below jobs, for tests that check the ledger and balances on
 * their own: the service reserves and settles only through admissions and completions, which
 * run the same money-module functions.
 */
import type { Tx } from '@sdx/db';
import { settleReservations, type SettleRequest } from '@sdx/domain/testing';

export { writeReservations, settleReservations, type SettleRequest } from '@sdx/domain/testing';

/** settleReservations for one job: the credits charged, or null when its reservation was no longer held. */
export async function settleReservation(tx: Tx, now: Date, request: SettleRequest): Promise<number | null> {
  const charged = await settleReservations(tx, now, [request]);
  return charged.get(request.jobId) ?? null;
}
