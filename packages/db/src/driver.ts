import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';

/**
 * A kysely dialect over a pg.Pool whose clients run in pg's pipeline mode: a statement is
 * written to the connection as soon as it is issued, with its parameters bound as usual
 * (extended protocol, never inlined), and the answers come back in order. Two things follow:
 *
 * - BEGIN is not waited for: it travels just ahead of the transaction's first statement, so a
 *   transaction costs one round trip less. (BEGIN cannot fail on a live connection; on a dead
 *   one the statement behind it fails too, and that error is reported.)
 * - `sendTogether` writes several statements back to back and waits once for all of them.
 *   Postgres still runs them one after the other, each with its own snapshot taken when it
 *   starts, exactly as separate round trips would: a statement that waits for a lock is
 *   followed by one that sees what the lock's holder committed. Inside a transaction, an error
 *   aborts it and the statements after it fail too; the first error is reported.
 *
 * Cursors (streamed reads) keep a portal open across round trips and are refused in pipeline
 * mode; the service reads large results in keyset slices instead.
 */
export interface DriverHooks {
  /** A connection could not be made (Postgres down, restarting, or out of slots). */
  onConnectError?(error: unknown): void;
  /** Waited for before each statement (or transaction) takes a connection: a pool's turn-taking with other work. */
  beforeAcquire?(): Promise<void>;
}

export function pipelinedDialect(pool: pg.Pool, hooks: DriverHooks = {}): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PipelinedDriver(pool, hooks),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

/** The statements a `sendTogether` call stands for, by the placeholder query kysely hands the driver. */
const together = new WeakMap<CompiledQuery, readonly CompiledQuery[]>();

type RowsOf<Q extends readonly CompiledQuery<unknown>[]> = { [K in keyof Q]: Q[K] extends CompiledQuery<infer R> ? R[] : never };

/**
 * Sends `queries` on `db`'s connection (the transaction's, when `db` is one) back to back, and
 * answers with each one's rows once all have answered.
 */
export async function sendTogether<Q extends readonly CompiledQuery<unknown>[]>(
  db: Pick<Kysely<unknown>, 'executeQuery'>,
  ...queries: Q
): Promise<RowsOf<Q>> {
  const placeholder = CompiledQuery.raw('-- statements sent together');
  together.set(placeholder, queries);
  const { rows } = await db.executeQuery<unknown[]>(placeholder);
  return rows as unknown as RowsOf<Q>;
}

class PipelinedDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, PipelinedConnection>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly hooks: DriverHooks,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<PipelinedConnection> {
    if (this.hooks.beforeAcquire) await this.hooks.beforeAcquire();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.hooks.onConnectError?.(error);
      throw error;
    }
    let connection = this.connections.get(client);
    if (!connection) {
      connection = new PipelinedConnection(client);
      this.connections.set(client, connection);
    }
    return connection;
  }

  /** Sends BEGIN and returns at once: its answer is waited for with the transaction's first statement. */
  beginTransaction(connection: PipelinedConnection, settings: TransactionSettings): Promise<void> {
    let text = 'begin';
    if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
    if (settings.accessMode) text += ` ${settings.accessMode}`;
    connection.begin(text);
    return Promise.resolve();
  }

  async commitTransaction(connection: PipelinedConnection): Promise<void> {
    await connection.end('commit');
  }

  async rollbackTransaction(connection: PipelinedConnection): Promise<void> {
    await connection.end('rollback');
  }

  releaseConnection(connection: PipelinedConnection): Promise<void> {
    try {
      connection.release();
    } catch (error) {
      // pg's release throws for a client released twice: a rejection, as from kysely's own drivers.
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}

class PipelinedConnection implements DatabaseConnection {
  /** A BEGIN on the wire whose answer nobody has waited for yet. */
  private begun: Promise<unknown> | null = null;

  constructor(private readonly client: pg.PoolClient) {}

  begin(text: string): void {
    this.begun = this.client.query(text);
    // Waited for with the next statement; never left unhandled.
    this.begun.catch(() => undefined);
  }

  async end(text: 'commit' | 'rollback'): Promise<void> {
    const begun = this.takeBegun();
    // A transaction that ran no statement: its BEGIN is answered before COMMIT or ROLLBACK goes.
    if (begun) await begun.catch(() => undefined);
    await this.client.query(text);
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const queries = together.get(compiled);
    const sent = (queries ?? [compiled]).map((q) => this.client.query(q.sql, [...q.parameters]));
    const begun = this.takeBegun();
    try {
      if (begun) await begun;
      const results = await Promise.all(sent);
      if (queries) return { rows: results.map((r): unknown[] => r.rows) as R[] };
      const { command, rowCount, rows } = results[0];
      const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
      return { numAffectedRows: counted ? BigInt(rowCount ?? 0) : undefined, rows: (rows ?? []) as R[] };
    } catch (error) {
      for (const p of sent) p.catch(() => undefined);
      throw error;
    }
  }

  /** kysely's DatabaseConnection streams; this one refuses, at the first read. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    const refused: AsyncIterableIterator<QueryResult<R>> = {
      next: () => Promise.reject(new Error('streamed reads are not supported on pipelined connections; read in keyset slices')),
      [Symbol.asyncIterator]: () => refused,
    };
    return refused;
  }

  release(): void {
    this.begun = null;
    this.client.release();
  }

  private takeBegun(): Promise<unknown> | null {
    const begun = this.begun;
    this.begun = null;
    return begun;
  }
}
