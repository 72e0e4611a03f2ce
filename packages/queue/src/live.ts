import type { RedisClient } from './redis';

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

/** A change of a job, as the domain's live publisher takes it (LivePublisher of @sdx/domain). */
export interface LiveJobChange {
  jobId: string;
  batchId: string | null;
}

/**
 * Publishes job changes on the live channels: one pipeline per call, not waited for. While Redis
 * is down the messages are dropped (a stream shows the next change, and reads the state itself
 * when its connection comes back). The domain's post-commit announce (jobs/announce.ts) calls it
 * as `services.live`.
 */
export class RedisLivePublisher {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly log: { debug(obj: object, msg: string): void },
  ) {}

  publish(changes: readonly LiveJobChange[]): void {
    if (changes.length === 0 || this.redis.status !== 'ready') return;
    const pipeline = this.redis.pipeline();
    const batches = new Set<string>();
    for (const { jobId, batchId } of changes) {
      pipeline.publish(liveChannel(this.prefix, 'job', jobId), '');
      if (batchId) batches.add(batchId);
    }
    for (const batchId of batches) pipeline.publish(liveChannel(this.prefix, 'batch', batchId), '');
    pipeline.exec().catch((err: Error) => this.log.debug({ err: err.message }, 'live publish failed'));
  }
}
