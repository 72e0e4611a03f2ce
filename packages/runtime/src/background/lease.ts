import { randomBytes } from 'node:crypto';
import type { RedisClient } from '@sdx/queue';

/** Takes the lease when it is free or already this holder's, and sets its time to live either way. */
const TAKE = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;

/** Deletes the lease when this holder has it. */
const RELEASE = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

/**
 * A lease in Redis on one background task, so that one process of the fleet runs it at a time: a
 * key holding the holder's random token with a time to live. The holder renews it while a pass
 * runs and leaves it to expire after, so the task runs once per time to live across the fleet
 * (whoever holds it runs again when its time comes); a holder that stops releases it at once,
 * one that dies leaves it to expire.
 */
export class RedisLease {
  private readonly token = randomBytes(12).toString('hex');

  constructor(
    private readonly redis: RedisClient,
    readonly key: string,
  ) {}

  /** True when this holder has the lease for `ttlMs` from now (a connection still connecting is given a second first). */
  async take(ttlMs: number): Promise<boolean> {
    await untilReady(this.redis, 1_000);
    return (await this.redis.eval(TAKE, 1, this.key, this.token, String(Math.max(1, Math.round(ttlMs))))) === 1;
  }

  /** Gives the lease up if this holder has it. */
  async release(): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.key, this.token);
  }
}

/** Resolves once the connection is ready, or after `ms` (the command then fails as Redis is away). */
function untilReady(redis: RedisClient, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/** The key of a task's lease under the deployment's Redis prefix. */
export function leaseKey(prefix: string, task: string): string {
  return `${prefix}:lease:${task}`;
}
