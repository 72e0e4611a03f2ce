import { Kysely, type Transaction } from 'kysely';
import pg from 'pg';
import { pipelinedDialect } from './driver';
import type { Database } from './schema';

// bigint (int8) and numeric counts come back as numbers: credit amounts stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number(value));
// `date` columns stay ISO strings (YYYY-MM-DD), never shifted by the local time zone.
pg.types.setTypeParser(1082, (value) => value);

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Either the pool or an open transaction: read functions accept both. */
export type Executor = Kysely<Database> | Transaction<Database>;

/** Told when connections to Postgres fail and when one succeeds again (see OutageLog in @sdx/config). */
export interface AvailabilityObserver {
  failed(error: unknown): void;
  succeeded(): void;
}

export interface DbOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  availability?: AvailabilityObserver;
  /** Waited for before each statement or transaction takes one of the pool's connections (see DriverHooks). */
  beforeAcquire?: () => Promise<void>;
}

export function createDb(options: DbOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'social-data',
    connectionTimeoutMillis: 5000,
    // pg's pipeline mode (see driver.ts): statements go out without waiting for the previous answer.
    pipeline: true,
  });
  // A client that loses its connection, idle or checked out, must not crash the process: the
  // query it was running fails with the error, and the pool discards the client. Every client
  // gets its listener the moment the pool has connected it, before anyone can check it out.
  const availability = options.availability;
  const lost = (error: unknown) => availability?.failed(error);
  pool.on('error', lost);
  pool.on('connect', (client) => {
    client.on('error', lost);
    availability?.succeeded();
  });
  return new Kysely<Database>({ dialect: pipelinedDialect(pool, { onConnectError: lost, beforeAcquire: options.beforeAcquire }) });
}
