import type { Request, Response } from 'express';
import type IORedis from 'ioredis';
import type { Logger } from 'pino';
import type { Db } from '@sdx/db';
import { countChildrenOf, isTerminal, loadJobById, renderBatch, renderJob } from '@sdx/domain';
import { createWorkerRedis, type LiveKind, liveChannel } from '@sdx/queue';

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
 * drains; everything a stream holds (its place in the topic, the topic, the subscription, the
 * keep-alive timer when it was the last) is released at its end.
 */

export interface LiveSource {
  kind: LiveKind;
  id: string;
}

interface Stream {
  res: Response;
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
  prefix: string;
  log: Logger;
  /** Interval of the comment lines that keep idle connections open (default 15 s). */
  keepAliveMs?: number;
}

interface LiveState {
  data: Record<string, unknown>;
  status: string;
  terminal: boolean;
}

export const KEEP_ALIVE_MS = 15_000;

export class LiveHub {
  private subscriber: IORedis | null = null;
  private readonly topics = new Map<string, Topic>();
  private keepAlive: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly options: LiveHubOptions) {}

  /** Streams `source` to the response until its terminal state, the client's disconnect or close(). */
  stream(req: Request, res: Response, source: LiveSource): void {
    res.status(200);
    res.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      // no-transform: compression and proxies must pass each event on at once.
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    if (this.closed) {
      res.end();
      return;
    }
    const channel = liveChannel(this.options.prefix, source.kind, source.id);
    let topic = this.topics.get(channel);
    if (!topic) {
      topic = { source, streams: new Set(), loading: false, again: false };
      this.topics.set(channel, topic);
      this.subscribe(channel, topic);
    }
    const stream: Stream = { res, shown: null, status: null };
    topic.streams.add(stream);
    const leave = () => this.leave(channel, stream);
    req.once('close', leave);
    res.once('close', leave);
    this.startKeepAlive();
    this.refresh(topic);
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
    for (const topic of [...this.topics.values()]) for (const stream of [...topic.streams]) stream.res.end();
    this.topics.clear();
    this.stopKeepAlive();
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  private connection(): IORedis {
    if (this.subscriber) return this.subscriber;
    const subscriber = createWorkerRedis(this.options.redisUrl);
    let connectedBefore = false;
    subscriber.on('error', (err: Error) => this.options.log.debug({ err: err.message }, 'live subscriber error'));
    subscriber.on('ready', () => {
      // Changes made while the connection was down were not heard: read every topic again.
      if (connectedBefore) for (const topic of this.topics.values()) this.refresh(topic);
      connectedBefore = true;
    });
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

  private leave(channel: string, stream: Stream): void {
    const topic = this.topics.get(channel);
    if (!topic || !topic.streams.delete(stream)) return;
    if (!stream.res.writableEnded) stream.res.end();
    if (topic.streams.size > 0) return;
    this.topics.delete(channel);
    this.subscriber?.unsubscribe(channel).catch(() => undefined);
    if (this.topics.size === 0) this.stopKeepAlive();
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

  private startKeepAlive(): void {
    if (this.keepAlive) return;
    this.keepAlive = setInterval(() => {
      for (const topic of this.topics.values()) for (const stream of topic.streams) write(stream.res, ': keep-alive\n\n');
    }, this.options.keepAliveMs ?? KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }
}

/** Writes and flushes at once (a compression middleware, if any, holds data until flushed). */
function write(res: Response, chunk: string): void {
  if (res.writableEnded) return;
  res.write(chunk);
  (res as Response & { flush?: () => void }).flush?.();
}
