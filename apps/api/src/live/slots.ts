import { isCluster, type RedisClient } from '@sdx/queue';

/**
 * The open event streams of each workspace, counted across every API process in Redis: one
 * sorted set per workspace, whose members are stream IDs scored by the time their lease ends
 * (Redis server time, so the processes' clocks need not agree). A process renews the leases of
 * its streams on a timer and removes a stream's member when it ends; the streams of a process
 * that crashed are not renewed and stop counting when their lease runs out. Taking a slot drops
 * the lapsed members, counts and adds in one script, so two processes cannot both take the last.
 */

// KEYS[1] the workspace's set; ARGV: limit, stream ID, lease (ms). 1 when taken, 0 when full.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`;

// KEYS[1] the workspace's set; ARGV: lease (ms), then the stream IDs whose leases go on (a
// member removed meanwhile is not added back).
const RENEW = `
local t = redis.call('TIME')
local until_ = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
`;

export class StreamSlots {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** How long a slot counts without being renewed. */
    private readonly leaseMs: number,
  ) {}

  private key(workspaceId: string): string {
    return `${this.prefix}:live:streams:${workspaceId}`;
  }

  /** Takes a slot for the stream unless the workspace has `limit` streams open. */
  async take(workspaceId: string, streamId: string, limit: number): Promise<boolean> {
    const taken = await this.redis.eval(TAKE, 1, this.key(workspaceId), limit, streamId, this.leaseMs);
    return Number(taken) === 1;
  }

  /** Extends the leases of these streams, by workspace (one pipeline on one Redis). */
  async renew(streams: ReadonlyMap<string, readonly string[]>): Promise<void> {
    if (streams.size === 0) return;
    if (isCluster(this.redis)) {
      // Each workspace's set may live on another node of a cluster: one script each, at once.
      await Promise.all([...streams].map(([workspaceId, ids]) => this.redis.eval(RENEW, 1, this.key(workspaceId), this.leaseMs, ...ids)));
      return;
    }
    const pipeline = this.redis.pipeline();
    for (const [workspaceId, ids] of streams) pipeline.eval(RENEW, 1, this.key(workspaceId), this.leaseMs, ...ids);
    await pipeline.exec();
  }

  async release(workspaceId: string, streamId: string): Promise<void> {
    await this.redis.zrem(this.key(workspaceId), streamId);
  }

  /** Streams counted now for the workspace (lapsed leases excluded): for tests and operators. */
  async count(workspaceId: string): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    return this.redis.zcount(this.key(workspaceId), `(${Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)}`, '+inf');
  }
}
