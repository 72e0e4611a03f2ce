/**
 * The text Postgres writes for a jsonb value (`value::jsonb::text`), computed here without a
 * round trip: a result page kept outside Postgres (the object result store) holds its items in
 * this form, so every read answers the same bytes whichever store holds the page.
 *
 * Postgres' rules (jsonb output, PostgreSQL 12 to 17):
 * - an object's keys in jsonb order: shorter first (in UTF-8 bytes), then by bytes; a repeated
 *   key keeps its last value; `"key": value` pairs separated by `, `;
 * - an array's elements separated by `, `;
 * - strings escaped as JSON.stringify escapes them (the same characters, `\u00XX` in lower case);
 * - numbers as numeric prints them: never in exponent form (`1e+21` is
 *   `1000000000000000000000`, `1.5e-7` is `0.00000015`).
 * The value is first taken through JSON.stringify, as the service sends it to Postgres, so
 * `undefined`, functions, `toJSON` and non-finite numbers are treated as they would be there.
 */
export function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('jsonbText: the value has no JSON form');
  return write(JSON.parse(text) as unknown);
}

/** jsonbText of each item of a list (one JSON.stringify for the whole list). */
export function jsonbTexts(items: readonly unknown[]): string[] {
  return (JSON.parse(JSON.stringify(items)) as unknown[]).map(write);
}

function write(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return numericText(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new TypeError(`jsonbText: unexpected ${typeof value}`);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ', ') + write(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0) return '{}';
  keys.sort(compareKeys);
  let out = '{';
  for (let i = 0; i < keys.length; i++) out += `${i === 0 ? '' : ', '}${JSON.stringify(keys[i])}: ${write(record[keys[i]])}`;
  return `${out}}`;
}

const ASCII = /^[\x00-\x7f]*$/;

/** jsonb's key order: by length in UTF-8 bytes, then bytewise. */
function compareKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) {
    if (a.length !== b.length) return a.length - b.length;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) return x.length - y.length;
  return Buffer.compare(x, y);
}

/** A finite number as Postgres' numeric prints what JSON.stringify wrote of it: plain decimal notation. */
export function numericText(n: number): string {
  const text = JSON.stringify(n);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  // The position of the decimal point within `digits` once the exponent is applied.
  const at = (point < 0 ? mantissa.length : point) + exponent;
  let plain: string;
  if (at <= 0) plain = `0.${'0'.repeat(-at)}${digits}`;
  else if (at >= digits.length) plain = digits + '0'.repeat(at - digits.length);
  else plain = `${digits.slice(0, at)}.${digits.slice(at)}`;
  return negative ? `-${plain}` : plain;
}
