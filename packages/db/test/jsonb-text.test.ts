import fc from 'fast-check';
import { sql } from 'kysely';
import { type Db, jsonbText, jsonbTexts } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/**
 * jsonbText writes what Postgres writes for `value::jsonb::text`: the object result store keeps
 * items in that form so that every read answers the same bytes as the Postgres store. Checked
 * here against Postgres itself, value by value.
 */
describe('jsonbText', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });

  afterAll(() => database.drop());

  /** Postgres' text of each value, as the service stores them (JSON.stringify, then jsonb). */
  async function postgresTexts(values: unknown[]): Promise<string[]> {
    const { rows } = await sql<{ text: string }>`
      select e.value::text as text from jsonb_array_elements(${JSON.stringify(values)}::jsonb) with ordinality e(value, n) order by e.n
    `.execute(db);
    return rows.map((row) => row.text);
  }

  it('matches Postgres on the edge cases: key order, escapes, numbers, nesting, unicode', async () => {
    const values: unknown[] = [
      { b: 1, a: 2, aa: 3, B: 4, '': 5, é: 6, z: 7, ab: { y: [], x: {} } },
      ['\u0001\u001f\b\f\n\r\t"\\/', '\u2028\u2029\u007f', 'é漢字😀', ''],
      [0, -0, 1, -1, 0.1, 1e21, 1.5e-7, -2.5e25, 5e-324, 1.7976931348623157e308, 123456789012345680000, 0.000001, 1e-6, 12.5],
      { é: 1, ab: 2, '😀': 3, abcd: 4, ﬀ: 5 },
      true,
      false,
      null,
      'text',
      { nested: [{ a: [1, { b: null }] }, [], {}] },
      { when: new Date('2026-11-27T10:00:00.000Z'), missing: undefined, nan: Number.NaN, inf: Number.POSITIVE_INFINITY },
    ];
    expect(values.map(jsonbText)).toEqual(await postgresTexts(values));
    expect(jsonbTexts(values)).toEqual(await postgresTexts(values));
  });

  it('matches Postgres on random JSON values', async () => {
    // Strings Postgres accepts in jsonb: no NUL, no lone surrogate (keys and values).
    const bad = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const accepted = (value: unknown): boolean => {
      if (typeof value === 'string') return !bad.test(value);
      if (Array.isArray(value)) return value.every(accepted);
      if (value && typeof value === 'object') return Object.entries(value).every(([key, item]) => !bad.test(key) && accepted(item));
      return true;
    };
    const values = fc.sample(fc.jsonValue({ maxDepth: 4, depthSize: 'small', stringUnit: 'binary' }).filter(accepted), {
      numRuns: 400,
      seed: 20261127,
    });
    expect(values.map(jsonbText)).toEqual(await postgresTexts(values));
  });
});
