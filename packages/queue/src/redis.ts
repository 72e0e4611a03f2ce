import IORedis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';

/**
 * Every Redis connection of the service is made here: to the one Redis of REDIS_URL, or, when
 * REDIS_CLUSTER_NODES lists a Redis Cluster's nodes, to that cluster (an ioredis Cluster, which
 * follows the cluster's slot map, its redirections and its failovers). Each connection has a
 * role, which decides how it behaves while Redis is unreachable:
 *
 * - `fast`: request paths (rate limiter, queue producers, stream slots). No offline queue, so
 *   a command issued while Redis is down errors at once instead of hanging.
 * - `worker`: long-lived blocking consumers (BullMQ workers). Commands wait and retry forever.
 * - `subscriber`: the live-progress subscriber. As `worker`; resubscribes after a reconnect or
 *   a failover.
 *
 * On a cluster, a command or script that names several keys must name keys of one hash slot:
 * BullMQ's keys share one through a hash-tagged prefix (queuePrefix); every other key the
 * service uses is touched alone (one key per command or script).
 */

/** One Redis Cluster node (REDIS_CLUSTER_NODES). */
export interface RedisNode {
  host: string;
  port: number;
}

/** Where Redis is: REDIS_URL, and a cluster's seed nodes when one is configured. */
export interface RedisTarget {
  url: string;
  clusterNodes?: readonly RedisNode[];
}

/** A connection of either kind: the service's code takes both. */
export type RedisClient = IORedis | Cluster;

export type RedisRole = 'fast' | 'worker' | 'subscriber';

const FAST: RedisOptions = {
  maxRetriesPerRequest: 1,
  connectTimeout: 1000,
  // A Redis that accepts but does not answer fails a request after this. Not shorter: after a
  // busy tick, Node runs due timers before it reads the socket, so a 1 s timeout failed
  // commands whose answers had already arrived on a loaded host.
  commandTimeout: 5000,
};

const WAITING: RedisOptions = { maxRetriesPerRequest: null };

/** The connection a role gets, to the one Redis or to the cluster of `target`. */
export function createRedis(target: string | RedisTarget, role: RedisRole, options: RedisOptions = {}): RedisClient {
  const { url, clusterNodes = [] } = typeof target === 'string' ? { url: target } : target;
  if (clusterNodes.length > 0) return createCluster(url, clusterNodes, role, options);
  if (role === 'fast') {
    return new IORedis(url, {
      ...FAST,
      enableOfflineQueue: false,
      retryStrategy: (times) => Math.min(times * 100, 1000),
      ...options,
    });
  }
  return new IORedis(url, { ...WAITING, enableReadyCheck: false, ...options });
}

/**
 * A Redis Cluster connection. REDIS_URL gives the nodes' credentials and TLS (`rediss:`), not
 * their addresses; a cluster has only database 0. Slot maps are refreshed on each redirection
 * and while a failover is under way (commands to the failed master's slots are retried every
 * 100 ms until its replica has taken over, for the waiting roles; a fast command fails).
 */
function createCluster(url: string, nodes: readonly RedisNode[], role: RedisRole, options: RedisOptions): Cluster {
  const fast = role === 'fast';
  const { enableOfflineQueue, ...nodeOptions } = options;
  const clusterOptions: ClusterOptions = {
    enableOfflineQueue: enableOfflineQueue ?? !fast,
    enableReadyCheck: true,
    // A node that went away: ask the others for the new slot map at once.
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    retryDelayOnMoved: 0,
    slotsRefreshTimeout: 2000,
    slotsRefreshInterval: 5000,
    clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
    redisOptions: { ...credentialsOf(url), ...(fast ? FAST : WAITING), ...nodeOptions },
  };
  return new Cluster(
    nodes.map(({ host, port }) => ({ host, port })),
    clusterOptions,
  );
}

/** The user, password and TLS of a redis:// or rediss:// URL, for a cluster's nodes. */
export function credentialsOf(url: string): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {};
  }
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** Redis for request paths: fail fast (see createRedis). A URL alone gives one Redis. */
export function createFastRedis(url: string, options?: RedisOptions): IORedis;
export function createFastRedis(target: string | RedisTarget, options?: RedisOptions): RedisClient;
export function createFastRedis(target: string | RedisTarget, options: RedisOptions = {}): RedisClient {
  return createRedis(target, 'fast', options);
}

/** Redis for long-lived blocking consumers (BullMQ workers): retry forever. */
export function createWorkerRedis(url: string, options?: RedisOptions): IORedis;
export function createWorkerRedis(target: string | RedisTarget, options?: RedisOptions): RedisClient;
export function createWorkerRedis(target: string | RedisTarget, options: RedisOptions = {}): RedisClient {
  return createRedis(target, 'worker', options);
}

/** Redis for the live-progress subscriber: retry forever, resubscribe after reconnecting. */
export function createSubscriberRedis(target: string | RedisTarget, options: RedisOptions = {}): RedisClient {
  return createRedis(target, 'subscriber', options);
}

/** Whether a connection is to a Redis Cluster. */
export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}

/**
 * The prefix BullMQ's keys take on `client`: the deployment's prefix, as a hash tag on a cluster
 * (`{sdx}`: every key of every queue in one slot, which BullMQ's scripts need), unchanged on
 * one Redis (so existing queues keep their keys). A prefix that holds a hash tag already is kept.
 */
export function queuePrefix(prefix: string, client: RedisClient): string {
  if (!isCluster(client) || /\{[^}]+\}/.test(prefix)) return prefix;
  return `{${prefix}}`;
}
