import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db, JobRow, WorkspaceRow } from '@sdx/db';
import type { ExtractionQueues } from '@sdx/queue';
import type { GroupOutcome } from './admission/admit';
import type { Submission } from './admission/plan';
import type { Completion } from './jobs/state';
import type { ClaimedDelivery, DeliveryOutcome, RecordedDelivery } from './webhooks/deliver';
import type { Clock } from './time';
import type { AuthenticatedKey } from './workspaces/api-keys';
import type { WebhookSender } from '@sdx/webhooks';

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

/** Takes items one at a time and answers each; how it groups them is its own business. */
export interface Batcher<I, O> {
  submit(item: I): Promise<O>;
}

/**
 * The per-process batchers (group commit) the domain's entry points submit to. They are built
 * where a process is wired (packages/runtime), each around the domain function that does one
 * group's work: admitGroup, claimJobs, completeJobs, lookupKeys, and for webhook attempts
 * claimDeliveries and recordDeliveryOutcomes.
 */
export interface Batchers {
  admissions: Batcher<Submission, GroupOutcome>;
  claims: Batcher<string, JobRow | null>;
  completions: Batcher<Completion, boolean>;
  keyLookups: Batcher<string, AuthenticatedKey | null>;
  deliveryClaims: Batcher<string, ClaimedDelivery | null>;
  deliveryOutcomes: Batcher<DeliveryOutcome, RecordedDelivery | null>;
}

/** A job whose status or progress changed: the live streams of it (and of its batch) show the change. */
export interface LiveChange {
  jobId: string;
  batchId: string | null;
}

/**
 * Publishes changes of jobs to the API processes' live streams (extensions.md 6), after the
 * change committed. Never throws and never waits: a lost message is a stream that shows the next
 * change instead.
 */
export interface LivePublisher {
  publish(changes: readonly LiveChange[]): void;
}

/** Tells this process's webhook dispatcher that events were written, so it moves them at once (it also looks on a timer). */
export interface OutboxSignal {
  written(): void;
  /** Calls `listener` (soon, once per burst) whenever events were written; returns the function that stops it. */
  listen(listener: () => void): () => void;
}

/** What domain functions need from the outside world, built once per process. */
export interface Services {
  db: Db;
  queues: ExtractionQueues;
  gate: OperationGate;
  config: AppConfig;
  clock: Clock;
  log: Logger;
  batch: Batchers;
  /** Checks webhook URLs and sends signed messages (SSRF guard and policy from the configuration). */
  webhooks: WebhookSender;
  live: LivePublisher;
  outbox: OutboxSignal;
}
