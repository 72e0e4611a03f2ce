import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db, WorkspaceRow } from '@sdx/db';
import type { ExtractionQueues } from '@sdx/queue';
import type { WebhookSender } from '@sdx/webhooks';
import type { PaymentGateway } from './payment-gateway';
import type { Clock } from './time';

/**
 * What the domain's engine (admission, job state, money, webhook attempts) needs from the
 * outside world, built once per process by packages/runtime. This file imports nothing of the
 * domain but the clock and the payment gateway's interface (payment-gateway.ts, which imports
 * nothing of the domain): every module may depend on it, and it depends on none of them.
 * `Services` (context.ts) adds the per-process services built on top of these resources.
 */

/** The tenant, resolved once per request by the auth middleware and passed to every domain function. */
export interface Tenant {
  workspace: WorkspaceRow;
  keyId: string | null;
  role: string | null;
  /** The signed-in user of a session caller; absent or null for API keys and the system. */
  userId?: string | null;
  /**
   * For an API key: whether it had a monthly credit cap when the request was authenticated.
   * False lets the admission skip reading the key's month's spend (there is no cap to check it
   * against; the spend is still counted). Absent: read it.
   */
  keyCapped?: boolean;
}

/** Which (platform, operation) pairs some provider serves: the registry, seen from the domain. */
export interface OperationGate {
  isEnabled(platform: string, operation: string): boolean;
}

/** A job whose status or progress changed: the live streams of it (and of its batch) show the change. */
export interface LiveChange {
  jobId: string;
  batchId: string | null;
}

/**
 * Publishes changes of jobs to the API processes' live streams (extensions.md 6), after the
 * change committed. Never throws and never waits: a lost message is a stream that shows the next
 * change instead. Implemented over Redis pub/sub by `RedisLivePublisher` (packages/queue/src/live.ts).
 */
export interface LivePublisher {
  publish(changes: readonly LiveChange[]): void;
}

/**
 * Tells this process's webhook dispatcher that events were written, so it moves them at once (it
 * also looks on a timer). Implemented by `LocalSignal` (webhooks/outbox-signal.ts).
 */
export interface OutboxSignal {
  written(): void;
  /** Calls `listener` (soon, once per burst) whenever events were written; returns the function that stops it. */
  listen(listener: () => void): () => void;
}

export interface Resources {
  db: Db;
  queues: ExtractionQueues;
  gate: OperationGate;
  config: AppConfig;
  clock: Clock;
  log: Logger;
  /** Checks webhook URLs and sends signed messages (SSRF guard and policy from the configuration). */
  webhooks: WebhookSender;
  live: LivePublisher;
  outbox: OutboxSignal;
  /**
   * The object result store's bucket (S3_*), when one is configured: result pages are written
   * there under RESULT_STORE=s3, and pages written there are read from it whatever the setting.
   * Absent, every page is in its row. Implemented by `BucketResultObjects` (jobs/result-objects.ts).
   */
  resultObjects?: ResultObjects;
  /**
   * The payment provider, when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set: checkouts,
   * subscriptions, the portal, off-session charges and the webhook's events. Absent, billing
   * writes answer 503 `billing_unavailable`. Implemented by `StripeGateway` (packages/payments).
   */
  payments?: PaymentGateway;
}

/** A page's part of a shared object: where its bytes start, and how many. */
export interface ObjectPart {
  offset: number;
  bytes: number;
}

/** A page of a result kept as an object: its key and its size in bytes. */
export interface StoredObject {
  key: string;
  bytes: number;
}

/**
 * Result pages as objects of a bucket: one compressed NDJSON object per page, each line an
 * item's JSON text exactly as Postgres writes it (jsonbText), so reads answer the same bytes
 * from either store. Fails with StoreUnavailable (@sdx/storage) when the bucket does not answer.
 */
export interface ResultObjects {
  /** Writes a page's item texts (jsonbText) as a new object of the job; its key and size. */
  put(jobId: string, pageNo: number, lines: readonly string[]): Promise<StoredObject>;
  /**
   * Writes several pages (the last pages of jobs completed together) as one new object, each
   * page a compressed part of its own; the object's key and each part's place in it.
   */
  putPages(
    pages: ReadonlyArray<{ jobId: string; pageNo: number; lines: readonly string[] }>,
  ): Promise<{ key: string; parts: ObjectPart[] }>;
  /** The item texts of a page's object (or of its part of a shared object), in order. */
  lines(key: string, part?: ObjectPart | null): Promise<string[]>;
  delete(keys: readonly string[]): Promise<void>;
  /** The result objects, a listing page at a time, in key order from `after`. */
  list(after?: string): AsyncGenerator<Array<{ key: string; lastModified: Date }>>;
}
