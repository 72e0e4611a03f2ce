import { CompiledQuery, type Kysely, type PostgresCursor, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult, sql } from 'kysely';
import pg from 'pg';
// pg's own conversion of a JavaScript value to the text it sends for a parameter, and its quoting.
import { escapeLiteral, prepareValue } from 'pg/lib/utils';

/**
 * Fewer round trips per transaction. kysely sends BEGIN on its own, then each statement, then
 * COMMIT on its own: two of a short transaction's round trips carry no work. The clients this
 * pool hands out hold BEGIN back and send it in front of the transaction's first statement, as
 * one simple-protocol message; a statement marked with `thenCommit` carries the COMMIT behind
 * it the same way, and kysely's own COMMIT is then answered without a round trip.
 *
 * A statement sent with BEGIN or COMMIT has its parameters written into the text as literals:
 * each value goes through pg's own parameter conversion and is quoted by pg's escapeLiteral,
 * so Postgres resolves its type from the context exactly as it would a parameter's, and no
 * value is ever read as SQL. Every other statement goes through unchanged.
 *
 * Statements that follow in a multi-statement message run one after the other, each with its
 * own snapshot, as separate round trips would; an error stops the message there, leaving the
 * transaction aborted for the ROLLBACK that kysely sends.
 */
const THEN_COMMIT = '/* then commit */';

/**
 * Marks the last statement of a transaction: COMMIT travels with it. Append with kysely's
 * `modifyEnd(thenCommit)`. A statement after it in the same transaction is refused (it would
 * run outside the transaction), and the transaction is committed once it succeeds: the code
 * after it must not be able to fail.
 */
export const thenCommit = sql.raw(THEN_COMMIT);

/** Marks a statement sent as a named prepared statement (see `prepared`). */
const PREPARED = /\/\* prepared:([a-z_]+) \*\/$/;

/**
 * Marks a statement of fixed text, sent outside a transaction, to be sent as a named prepared
 * statement: each connection parses it once, and Postgres plans it once it finds its generic
 * plan as good as a custom one (a lookup by a unique key, with one parameter per value, is). A
 * hot statement then skips parsing and planning, which for a short lookup cost more than running
 * it. Append with kysely's `modifyEnd(prepared('name'))`; the name must be unique to the text.
 * Inside a transaction whose BEGIN is held back the statement is sent like any other.
 */
export function prepared(name: string) {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`prepared: ${name} is not a statement name`);
  return sql.raw(`/* prepared:${name} */`);
}

/** Ends a message of several statements built by `together`. */
const TOGETHER = '/* together */';
const RESULTS = '__together_results';

/**
 * Sends several statements as one message (after a held BEGIN, in the same one) and answers
 * with each statement's rows. They still run one after the other, each with its own snapshot,
 * exactly as separate round trips would: a statement that waits for a lock is followed by one
 * that sees what the lock's holder committed. Their parameters are written as literals.
 */
export async function together<Q extends readonly CompiledQuery<any>[]>(db: Kysely<any>, ...queries: Q): Promise<{ [K in keyof Q]: Q[K] extends CompiledQuery<infer R> ? R[] : never }> {
  const text = queries.map((q) => inlineParameters(q.sql, q.parameters)).join(';\n');
  const { rows } = await db.executeQuery<Record<string, unknown[][]>>(CompiledQuery.raw(`${text}\n${TOGETHER}`));
  const results = rows[0]?.[RESULTS];
  if (!results || results.length !== queries.length) throw new Error('together: the statements were not sent as one message');
  return results as { [K in keyof Q]: Q[K] extends CompiledQuery<infer R> ? R[] : never };
}

type Result = PostgresQueryResult<unknown>;

/** The answer to a statement that was not sent (BEGIN held back, COMMIT already sent). */
const answered = (): Result => ({ command: 'SELECT', rowCount: 0, rows: [] });

/** A pg.Pool whose clients hold BEGIN back and let a marked statement carry COMMIT. */
export class PipelinedPool implements PostgresPool {
  constructor(private readonly pool: pg.Pool) {}

  async connect(): Promise<PipelinedClient> {
    return new PipelinedClient(await this.pool.connect());
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

export class PipelinedClient implements PostgresPoolClient {
  /** BEGIN was asked for and not yet sent. */
  private beginHeld = false;
  /** The transaction committed with its last statement; kysely's COMMIT is still to come. */
  private committed = false;

  constructor(private readonly client: pg.PoolClient) {}

  release(): void {
    this.beginHeld = false;
    this.committed = false;
    this.client.release();
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(textOrCursor: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof textOrCursor !== 'string') {
      // A cursor is sent as it is; a held BEGIN goes ahead of it (pg runs its queue in order).
      if (this.beginHeld) {
        this.beginHeld = false;
        this.client.query('begin').catch(() => undefined);
      }
      return (this.client.query as unknown as (c: PostgresCursor<R>) => PostgresCursor<R>)(textOrCursor);
    }
    return this.send(textOrCursor, parameters) as Promise<PostgresQueryResult<R>>;
  }

  private async send(text: string, values: ReadonlyArray<unknown>): Promise<Result> {
    // Only kysely's own BEGIN / COMMIT / ROLLBACK matter here: a statement is never lowered whole.
    const verb = text.length <= 16 ? text.trim().toLowerCase() : '';
    if (verb === 'begin') {
      this.beginHeld = true;
      return answered();
    }
    if (this.committed) {
      // kysely's COMMIT, or its ROLLBACK when the caller failed after the final statement: the
      // transaction is committed either way, and the caller's own error is what it reports.
      if (verb === 'commit' || verb === 'rollback') {
        this.committed = false;
        return answered();
      }
      throw new Error('a statement after the final statement of a transaction (thenCommit) would run outside it');
    }
    const held = this.beginHeld;
    this.beginHeld = false;
    // A transaction with no statement: nothing to send at all.
    if (held && (verb === 'commit' || verb === 'rollback')) return answered();
    const several = text.endsWith(TOGETHER);
    const commits = !several && text.trimEnd().endsWith(THEN_COMMIT);
    if (!held && !several && !commits) {
      const mark = text.endsWith(' */') ? text.lastIndexOf('/* prepared:') : -1;
      const name = mark >= 0 ? PREPARED.exec(text.slice(mark))?.[1] : undefined;
      const query = name ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] };
      return this.client.query(query) as unknown as Promise<Result>;
    }
    // together() wrote its statements' parameters already.
    const body = several ? text : inlineParameters(text, values);
    const results = await this.script(`${held ? 'begin;\n' : ''}${body}${commits ? ';\ncommit' : ''}`);
    this.committed = commits;
    const own = held ? results.slice(1) : results;
    return several ? { command: 'SELECT', rowCount: 1, rows: [{ [RESULTS]: own.map((r) => r.rows) }] } : own[0]!;
  }

  /** Several statements in one simple-protocol message: pg answers with one result each. */
  private async script(text: string): Promise<Result[]> {
    return (await this.client.query(text)) as unknown as Result[];
  }
}

/** A value as a SQL literal of unknown type, as Postgres would receive it as a parameter. */
export function literal(value: unknown): string {
  const text = prepareValue(value);
  if (text === null || text === undefined) return 'NULL';
  if (Buffer.isBuffer(text)) return `'\\x${text.toString('hex')}'::bytea`;
  return escapeLiteral(String(text));
}

/**
 * Replaces the $n placeholders of a statement with the literals of `values`. Quoted strings,
 * quoted identifiers, dollar-quoted bodies and comments are copied untouched.
 *
 * The statements of a hot path repeat their text, so each text is split at its placeholders
 * once and kept (a bounded number of texts); inlining is then a join of the pieces and the
 * values' literals.
 */
export function inlineParameters(text: string, values: ReadonlyArray<unknown>): string {
  let template = templates.get(text);
  if (!template) {
    template = splitAtPlaceholders(text);
    if (templates.size >= MAX_TEMPLATES) templates.clear();
    templates.set(text, template);
  }
  const { pieces, slots } = template;
  let out = pieces[0]!;
  for (let k = 0; k < slots.length; k++) {
    const index = slots[k]!;
    if (index < 0 || index >= values.length) throw new Error(`statement refers to $${index + 1}, but ${values.length} values were given`);
    out += literal(values[index]) + pieces[k + 1]!;
  }
  return out;
}

/** A statement's text around its placeholders: pieces[k], then the value of slots[k], and so on. */
interface Template {
  pieces: string[];
  slots: number[];
}

const MAX_TEMPLATES = 2000;
const templates = new Map<string, Template>();

/** Where a quoted string, quoted identifier, comment, dollar quote or placeholder may start. */
const SPECIAL = /['"$]|--|\/\*/g;

function splitAtPlaceholders(text: string): Template {
  const pieces: string[] = [];
  const slots: number[] = [];
  const n = text.length;
  let pieceStart = 0;
  let i = 0;
  while (i < n) {
    SPECIAL.lastIndex = i;
    const found = SPECIAL.exec(text);
    if (!found) break;
    i = found.index;
    const c = text[i]!;
    if (c === "'") {
      // 'it''s' and E'it\'s': a backslash escapes only in E strings.
      const escapes = i > 0 && /[eE]/.test(text[i - 1]!) && (i < 2 || !/[\w$]/.test(text[i - 2]!));
      i++;
      while (i < n) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === "'" && text[i + 1] === "'") i += 2;
        else if (text[i] === "'") break;
        else i++;
      }
      i++;
    } else if (c === '"') {
      i = skipQuoted(text, i + 1, '"');
    } else if (c === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
    } else if (c === '/') {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') (depth++, (i += 2));
        else if (text[i] === '*' && text[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
    } else {
      const glued = i > 0 && /[\w$]/.test(text[i - 1]!);
      const param = /^\$(\d+)/.exec(text.slice(i, i + 12));
      const tag = param ? null : /^\$([A-Za-z_][A-Za-z_0-9]*)?\$/.exec(text.slice(i, i + 64));
      if (param && !glued) {
        pieces.push(text.slice(pieceStart, i));
        slots.push(Number(param[1]) - 1);
        i += param[0].length;
        pieceStart = i;
      } else if (tag && !glued) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? n : end + tag[0].length;
      } else {
        i++;
      }
    }
  }
  pieces.push(text.slice(pieceStart));
  return { pieces, slots };
}

function skipQuoted(text: string, from: number, quote: string): number {
  let i = from;
  while (i < text.length) {
    if (text[i] === quote && text[i + 1] === quote) i += 2;
    else if (text[i] === quote) return i + 1;
    else i++;
  }
  return i;
}
