import type { CompiledQuery, KyselyPlugin } from 'kysely';
import type { Db } from '@sdx/db';

/** The names of the indexes an EXPLAIN (FORMAT JSON) plan reads, in plan order. */
export function indexesIn(plan: unknown): string[] {
  return valuesOf(plan, 'Index Name');
}

/** The node types of an EXPLAIN (FORMAT JSON) plan ("Index Scan", "Seq Scan", "Sort", ...), in plan order. */
export function nodeTypesIn(plan: unknown): string[] {
  return valuesOf(plan, 'Node Type');
}

function valuesOf(plan: unknown, wanted: string): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === wanted && typeof value === 'string') found.push(value);
        else walk(value);
      }
    }
  };
  walk(plan);
  return found;
}

/** The EXPLAIN (FORMAT JSON) plan of a compiled statement, with its parameters (nothing is executed). */
export async function explain(db: Db, compiled: CompiledQuery): Promise<unknown> {
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': unknown }>({ ...compiled, sql: `explain (format json) ${compiled.sql}` });
  return rows[0]['QUERY PLAN'];
}

/**
 * `db` with every statement it sends recorded, compiled with its parameters: hand it to a domain
 * function, then explain() what it sent, so a test reads the plans of the statements the code
 * really runs rather than of copies of them.
 */
export function recordingStatements(db: Db): { db: Db; statements: CompiledQuery[] } {
  const statements: CompiledQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      statements.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { db: db.withPlugin(plugin), statements };
}
