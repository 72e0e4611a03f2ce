import type { Logger } from 'pino';
import type { AppConfig } from '@sdx/config';
import type { Db, WorkspaceRow } from '@sdx/db';
import type { ExtractionQueues } from '@sdx/queue';
import type { Clock } from './time';

/** The tenant, resolved once per request by the auth middleware and passed to every domain function. */
export interface Tenant {
  workspace: WorkspaceRow;
  keyId: string | null;
  role: string | null;
}

/** Which (platform, operation) pairs some provider serves: the registry, seen from the domain. */
export interface OperationGate {
  isEnabled(platform: string, operation: string): boolean;
}

/** What domain functions need from the outside world, built once per process. */
export interface Services {
  db: Db;
  queues: ExtractionQueues;
  gate: OperationGate;
  config: AppConfig;
  clock: Clock;
  log: Logger;
}
