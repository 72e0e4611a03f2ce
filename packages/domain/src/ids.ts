import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Prefixed, time-sortable resource IDs from one helper: job_…, bat_…, sch_…, run_…, key_…, ws_…,
 * res_…, and for users and teams usr_…, ses_…, inv_…, aud_…; for webhooks whk_… (endpoints), evt_…
 * (events) and dlv_… (deliveries); pay_… for billing payments.
 */
export type IdPrefix =
  | 'job'
  | 'bat'
  | 'sch'
  | 'run'
  | 'key'
  | 'ws'
  | 'res'
  | 'usr'
  | 'ses'
  | 'inv'
  | 'aud'
  | 'whk'
  | 'evt'
  | 'dlv'
  | 'tok'
  | 'msg'
  | 'mrq'
  | 'pay'
  | 'dst'
  | 'mon'
  | 'mrn'
  | 'mch';

/**
 * ulid's own source asks the OS for one byte per character; this one draws the bytes from a
 * pool refilled 4 KB at a time (still the OS's CSPRNG). A byte / 256 is uniform over ulid's 32
 * characters.
 */
const pool = Buffer.alloc(4096);
let next = pool.length;
function randomFraction(): number {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 256;
}

const ulid = monotonicFactory(randomFraction);

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}
