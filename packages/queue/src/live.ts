/**
 * Redis pub/sub channels of live progress (extensions.md 6): workers publish that a job (and its
 * batch) changed; each API process holds one subscriber connection, subscribed to the channels
 * of the jobs and batches its clients are watching, and reads the new state once per change.
 * A message says only which resource changed: its state is read from Postgres, the source of
 * truth, so a reordered or lost message can never show a state that was not.
 */
export type LiveKind = 'job' | 'batch';

export function liveChannel(prefix: string, kind: LiveKind, id: string): string {
  return `${prefix}:live:${kind}:${id}`;
}
