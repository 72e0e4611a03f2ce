import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db, WorkspaceRow } from '@sdx/db';
import type { ExtractionQueues } from '@sdx/queue';
import type { WebhookSender } from '@sdx/webhooks';
import type { Clock } from './time';

/**
 * What the domain's engine (admission, job state, money, webhook attempts) needs from the
 * outside world, built once per process by packages/runtime. This file imports nothing of the
 * domain but the clock: every module may depend on it, and it depends on none of them.
 * `Services` (context.ts) adds the per-process services built on top of these resources.
 */

/** The tenant, resolved once per request by the auth middleware and passed to every domain function. */
export interface Tenant {
  workspace: WorkspaceRow;
  keyId: string | null;
  role: string | null;
  /** The signed-in user of a session caller; absent or null for API keys and the system. */
  userId?: string | null;
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
}
