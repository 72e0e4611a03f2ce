import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db, JobRow, WorkspaceRow } from '@sdx/db';
import type { ExtractionQueues } from '@sdx/queue';
import type { GroupOutcome } from './admission/admit';
import type { Submission } from './admission/plan';
import type { Completion } from './jobs/state';
import type { Clock } from './time';
import type { AuthenticatedKey } from './workspaces/api-keys';

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
 * group's work: admitGroup, claimJobs, completeJobs, lookupKeys.
 */
export interface Batchers {
  admissions: Batcher<Submission, GroupOutcome>;
  claims: Batcher<string, JobRow | null>;
  completions: Batcher<Completion, boolean>;
  keyLookups: Batcher<string, AuthenticatedKey | null>;
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
}
