import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '@sdx/db';
import { ApiError, countChildrenOf, isTerminal, loadJobById, renderBatch, renderJob } from '@sdx/domain/api';
import {
  createFastRedis,
  createSubscriberRedis,
  isCluster,
  type LiveKind,
  liveChannel,
  type RedisClient,
  type RedisNode,
  type RedisTarget,
} from '@sdx/queue';
import { StreamSlots } from './slots';

/**
 * Live progress (extensions.md 6): the Server-Sent Events streams of one API process.
 *
 * The process holds ONE Redis subscriber connection, made when the first stream opens. It is
 * subscribed to the channel of each job or batch some client of this process watches (a topic),
 * and unsubscribed when the last of them leaves. A message on a channel says only that the
 * resource changed: the topic reads its state once (one read per change, whatever the number
 * of clients; reads of a burst of changes coalesce) and writes to each client what changed for
 * it: `event: status` when the status did, `event: progress` when anything else shown did.
 * Nothing polls: between changes the process only writes a comment line every 15 s.
 *
 * A stream ends after its terminal state, when its client disconnects, or when the process
 * drains; everything a stream holds (its place in the topic, the topic, the subscription, its
 * slot, the timers when it was the last) is released at its end.
 *
 * Bounds (extensions-2.md 2): a workspace has at most `limit` streams open at once across every
 * API process (StreamSlots: a Redis sorted set of leases, renewed while a stream is open, so the
 * streams of a crashed process stop counting within a lease), one more is 429
 * stream_limit_exceeded. Every `recheckMs` (30 s) each credential a stream was opened with is
 * checked once: a revoked or expired key, an ended session, or a member no longer in the
 * workspace ends its streams, well within the 60 s the spec allows.
 */

export interface LiveSource {
  kind: LiveKind;
  id: string;
}

/** What admits a stream and keeps it open: the workspace's bound and the caller's credential. */
export interface StreamGuard {
  workspaceId: string;
  /** Streams open at once per workspace, across processes (MAX_STREAMS_PER_WORKSPACE). */
  limit: number;
  /** Names the credential (a key or session ID): streams of one credential share one check. */
  credential: string;
  /** Whether the credential still grants the stream; false ends it. */
  stillValid(): Promise<boolean>;
}

interface Stream {
  res: Response;
  channel: string;
  slotId: string;
  guard: StreamGuard;
  /** What the client was last shown (the state without heartbeat_at), or null before the first event. */
  shown: string | null;
  status: string | null;
}

interface Topic {
  source: LiveSource;
  streams: Set<Stream>;
  loading: boolean;
  /** A change arrived while the state was being read: read it again once that read is done. */
  again: boolean;
}

export interface LiveHubOptions {
  db: Db;
  redisUrl: string;
  /** A Redis Cluster's nodes (REDIS_CLUSTER_NODES): the subscriber and the slots' connection go to it. */
  redisClusterNodes?: readonly RedisNode[];
  prefix: string;
  log: Logger;
  /** Interval of the comment lines that keep idle connections open (default 15 s). */
  keepAliveMs?: number;
  /** Interval of the credential checks of open streams (default 30 s). */
  recheckMs?: number;
  /** How long a stream's slot counts without renewal (default 60 s; renewed every third of it). */
  leaseMs?: number;
  /** The connection for the slots; absent, the hub opens its own (fail fast). */
  redis?: RedisClient;
}

interface LiveState {
  data: Record<string, unknown>;
  status: string;
  terminal: boolean;
}

export const KEEP_ALIVE_MS = 15_000;
export const RECHECK_MS = 30_000;
export const STREAM_LEASE_MS = 60_000;

export class LiveHub {
  private subscriber: RedisClient | null = null;
  private commands: RedisClient | null = null;
  private slotStore: StreamSlots | null = null;
  private readonly topics = new Map<string, Topic>();
  private readonly streams = new Set<Stream>();
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(private readonly options: LiveHubOptions) {}

  /**
   * Streams `source` to the response until its terminal state, the client's disconnect, the end
   * of the credential (`guard`) or close(). Throws 429 stream_limit_exceeded, before anything is
   * written, when the workspace has `guard.limit` streams open.
   */
  async stream(req: Request, res: Response, source: LiveSource, guard: StreamGuard): Promise<void> {
    if (this.closed) {
      this.refuseClosed(res);
      return;
    }
    const slotId = randomUUID();
    let gone = false;
    const onGone = () => (gone = true);
    res.once('close', onGone);
    let taken: boolean;
    try {
      taken = await this.slots().take(guard.workspaceId, slotId, guard.limit);
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, 'live stream slots unavailable');
      throw new ApiError(
        'service_unavailable',
        'Event streams are temporarily unavailable; retry with backoff.',
        {},
        { 'Retry-After': '1' },
      );
    } finally {
      res.off('close', onGone);
    }
    if (!taken) {
      throw new ApiError(
        'stream_limit_exceeded',
        `This workspace has ${guard.limit} event streams open, the most it may; close one first.`,
        { limit: guard.limit },
      );
    }
    if (gone || this.closed) {
      // The client left, or the process began to drain, while the slot was being taken.
      this.slots()
        .release(guard.workspaceId, slotId)
        .catch(() => undefined);
      if (!gone) this.refuseClosed(res);
      return;
    }
    res.status(200);
    res.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      // no-transform: compression and proxies must pass each event on at once.
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const channel = liveChannel(this.options.prefix, source.kind, source.id);
    let topic = this.topics.get(channel);
    if (!topic) {
      topic = { source, streams: new Set(), loading: false, again: false };
      this.topics.set(channel, topic);
      this.subscribe(channel, topic);
    }
    const stream: Stream = { res, channel, slotId, guard, shown: null, status: null };
    topic.streams.add(stream);
    this.streams.add(stream);
    const leave = () => this.leave(stream);
    req.once('close', leave);
    res.once('close', leave);
    this.startTimers();
    this.refresh(topic);
  }

  /** A draining process answers a new stream with its headers and an immediate end: the client reconnects elsewhere. */
  private refuseClosed(res: Response): void {
    res.status(200);
    res.set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform' });
    res.end();
  }

  /** Streams, topics and subscribed channels now (what the disconnect test watches come back to zero). */
  stats(): { streams: number; topics: number } {
    let streams = 0;
    for (const topic of this.topics.values()) streams += topic.streams.size;
    return { streams, topics: this.topics.size };
  }

  /** Ends every stream (clients reconnect, to another process) and closes the subscriber connection. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.streams];
    this.streams.clear();
    for (const stream of open) stream.res.end();
    this.topics.clear();
    this.stopTimers();
    await Promise.all(
      open.map((stream) =>
        this.slots()
          .release(stream.guard.workspaceId, stream.slotId)
          .catch(() => undefined),
      ),
    );
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
    const commands = this.commands;
    this.commands = null;
    if (commands) await commands.quit().catch(() => commands.disconnect());
  }

  private slots(): StreamSlots {
    if (this.slotStore) return this.slotStore;
    let redis = this.options.redis;
    if (!redis) {
      const own = createFastRedis(this.target(), { enableOfflineQueue: true });
      own.on('error', (err: Error) => this.options.log.debug({ err: err.message }, 'live slots connection error'));
      this.commands = own;
      redis = own;
    }
    this.slotStore = new StreamSlots(redis, this.options.prefix, this.options.leaseMs ?? STREAM_LEASE_MS);
    return this.slotStore;
  }

  private target(): RedisTarget {
    return { url: this.options.redisUrl, clusterNodes: this.options.redisClusterNodes };
  }

  private connection(): RedisClient {
    if (this.subscriber) return this.subscriber;
    // On a cluster, the connection subscribes on one node (any node hears every publish) and
    // subscribes again, elsewhere if need be, when that node fails.
    const subscriber = createSubscriberRedis(this.target());
    let connectedBefore = false;
    subscriber.on('error', (err: Error) => this.options.log.debug({ err: err.message }, 'live subscriber error'));
    subscriber.on('ready', () => {
      // Changes made while the connection was down were not heard: read every topic again.
      if (connectedBefore) for (const topic of this.topics.values()) this.refresh(topic);
      connectedBefore = true;
    });
    // On a cluster, a node that left (a failed master) may have taken messages with it, sent to
    // it or while the subscription moved: read every topic again too.
    if (isCluster(subscriber)) {
      subscriber.on('-node', () => {
        for (const topic of this.topics.values()) this.refresh(topic);
      });
    }
    subscriber.on('message', (channel: string) => {
      const topic = this.topics.get(channel);
      if (topic) this.refresh(topic);
    });
    this.subscriber = subscriber;
    return subscriber;
  }

  private subscribe(channel: string, topic: Topic): void {
    // The state is read once now and once more when the subscription is in place, so a change
    // made in between is not missed.
    this.connection()
      .subscribe(channel)
      .then(() => {
        if (this.topics.get(channel) === topic) this.refresh(topic);
      })
      .catch((err: Error) => this.options.log.warn({ err: err.message, channel }, 'live subscribe failed'));
  }

  private leave(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    if (!stream.res.writableEnded) stream.res.end();
    this.slots()
      .release(stream.guard.workspaceId, stream.slotId)
      .catch((err: Error) => this.options.log.debug({ err: err.message }, 'live slot release failed (its lease runs out)'));
    if (this.streams.size === 0) this.stopTimers();
    const topic = this.topics.get(stream.channel);
    if (!topic || !topic.streams.delete(stream) || topic.streams.size > 0) return;
    this.topics.delete(stream.channel);
    this.subscriber?.unsubscribe(stream.channel).catch(() => undefined);
  }

  /** Renews the slots of this process's streams (their leases would otherwise run out). */
  private renewSlots(): void {
    const byWorkspace = new Map<string, string[]>();
    for (const stream of this.streams) {
      const ids = byWorkspace.get(stream.guard.workspaceId) ?? [];
      ids.push(stream.slotId);
      byWorkspace.set(stream.guard.workspaceId, ids);
    }
    this.slots()
      .renew(byWorkspace)
      .catch((err: Error) => this.options.log.warn({ err: err.message }, 'live slot renewal failed'));
  }

  /**
   * Checks each credential of the open streams once and ends the streams of those that no
   * longer hold. A check that fails (the database unreachable) keeps the streams: the next one
   * decides.
   */
  private async recheck(): Promise<void> {
    const byCredential = new Map<string, Stream[]>();
    for (const stream of this.streams) {
      const list = byCredential.get(stream.guard.credential) ?? [];
      list.push(stream);
      byCredential.set(stream.guard.credential, list);
    }
    await Promise.all(
      [...byCredential.values()].map(async (streams) => {
        const valid = await streams[0].guard.stillValid().catch((err: Error) => {
          this.options.log.warn({ err: err.message }, 'live credential check failed');
          return true;
        });
        if (valid) return;
        for (const stream of streams) {
          write(stream.res, ': the credential of this stream was revoked or has ended\n\n');
          this.leave(stream);
        }
      }),
    );
  }

  /** Reads the topic's state (once per burst of changes) and shows it to its streams. */
  private refresh(topic: Topic): void {
    if (topic.loading) {
      topic.again = true;
      return;
    }
    topic.loading = true;
    topic.again = false;
    this.load(topic.source)
      .then((state) => {
        if (state) this.show(topic, state);
      })
      .catch((err: Error) => this.options.log.warn({ err: err.message, ...topic.source }, 'live state read failed'))
      .finally(() => {
        topic.loading = false;
        if (topic.again && topic.streams.size > 0) this.refresh(topic);
      });
  }

  private show(topic: Topic, state: LiveState): void {
    const { heartbeat_at: _heartbeat, ...shown } = state.data;
    const signature = JSON.stringify(shown);
    const payload = JSON.stringify(state.data);
    for (const stream of [...topic.streams]) {
      if (stream.shown === signature) continue;
      const event = stream.status === state.status ? 'progress' : 'status';
      stream.shown = signature;
      stream.status = state.status;
      write(stream.res, `event: ${event}\ndata: ${payload}\n\n`);
      if (state.terminal) stream.res.end();
    }
  }

  private async load(source: LiveSource): Promise<LiveState | null> {
    const { db } = this.options;
    if (source.kind === 'job') {
      const job = await loadJobById(db, source.id);
      return job ? { data: renderJob(job, null), status: job.status, terminal: isTerminal(job.status) } : null;
    }
    const batch = await db.selectFrom('batches').selectAll().where('id', '=', source.id).executeTakeFirst();
    if (!batch) return null;
    const counts = await countChildrenOf(db, [batch]);
    const data = renderBatch(batch, counts.get(batch.id)!, null);
    return { data, status: data.status, terminal: isTerminal(data.status) };
  }

  private startTimers(): void {
    if (this.timers.length > 0) return;
    const every = (ms: number, run: () => void) => {
      const timer = setInterval(run, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.options.keepAliveMs ?? KEEP_ALIVE_MS, () => {
      for (const stream of this.streams) write(stream.res, ': keep-alive\n\n');
    });
    every(Math.max(1, Math.floor((this.options.leaseMs ?? STREAM_LEASE_MS) / 3)), () => this.renewSlots());
    every(this.options.recheckMs ?? RECHECK_MS, () => void this.recheck());
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}

/** Writes and flushes at once (a compression middleware, if any, holds data until flushed). */
function write(res: Response, chunk: string): void {
  if (res.writableEnded) return;
  res.write(chunk);
  (res as Response & { flush?: () => void }).flush?.();
}
