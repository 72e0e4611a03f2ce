import { sql } from 'kysely';
import type { Tx } from '@sdx/db';
import { claimHeldReservations, type PlannedReservation, type Balance, type Settlement, settleClaimed, withReservations } from '@sdx/domain';

/**
 * Credit operations at the level below jobs, for tests that check the ledger and balances on
 * their own: the service reserves and settles only through admissions and completions, which
 * run these same statements (withReservations, claimHeldReservations, settleClaimed).
 */

/** Writes planned reservations without jobs, in one statement. */
export async function writeReservations(tx: Tx, planned: readonly PlannedReservation[], balances: readonly Balance[], now: Date): Promise<void> {
  if (planned.length === 0) return;
  await withReservations(tx, planned, balances, now)
    .selectNoFrom(sql<number>`1`.as('written'))
    .execute();
}

export interface SettleRequest {
  jobId: string;
  /** Credits the delivered results cost (never more than was reserved). */
  credits: number;
  /** Results delivered. */
  units: number;
}

/**
 * Settles held reservations of jobs against what they delivered, as a completion does without
 * touching the jobs: each job charged as if settled alone, at most once (a reservation moves
 * from held once, and the ledger's unique index backs it). Returns the credits charged per job
 * whose reservation was still held.
 */
export async function settleReservations(tx: Tx, now: Date, requests: readonly SettleRequest[]): Promise<Map<string, number>> {
  if (requests.length === 0) return new Map();
  const wanted = requests.map((r) => sql`(${r.jobId}::text, ${r.credits}::bigint)`);
  const claimed = await claimHeldReservations(now, sql`(values ${sql.join(wanted)}) as v(job_id, charge)`).execute(tx);
  const byJob = new Map(claimed.rows.map((r) => [r.job_id, r]));
  const settlements: Settlement[] = [];
  for (const request of requests) {
    const reservation = byJob.get(request.jobId);
    if (reservation) settlements.push({ reservation, units: request.units });
  }
  return settleClaimed(tx, now, settlements);
}

/** settleReservations for one job: the credits charged, or null when its reservation was no longer held. */
export async function settleReservation(tx: Tx, now: Date, request: SettleRequest): Promise<number | null> {
  const charged = await settleReservations(tx, now, [request]);
  return charged.get(request.jobId) ?? null;
}
