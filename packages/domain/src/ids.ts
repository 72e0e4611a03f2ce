import { monotonicFactory } from 'ulid';

/** Prefixed, time-sortable resource IDs from one helper: job_…, bat_…, sch_…, run_…, key_…, ws_…, res_…. */
export type IdPrefix = 'job' | 'bat' | 'sch' | 'run' | 'key' | 'ws' | 'res';

const ulid = monotonicFactory();

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}
