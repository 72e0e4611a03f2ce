/**
 * Deterministic randomness for the sandbox provider. Every value is derived from a string
 * key and an item index, so the same request always produces byte-identical items, and item i
 * is the same whether it is produced in a fresh run or in a run resumed from a cursor.
 */

function avalanche(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** 32-bit hash of a string (FNV-1a, then an avalanche step). */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return avalanche(h);
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const BASE64URL = `${BASE62}-_`;

/** A small, fast PRNG (sfc32). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** Per-stream constant that varies the unique ID tails between streams. */
  readonly salt: number;

  constructor(a: number, b: number, c: number, d: number, salt = 0) {
    this.salt = salt >>> 0;
    this.a = a >>> 0;
    this.b = b >>> 0;
    this.c = c >>> 0;
    this.d = d >>> 0;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** The generator for item `index` of the stream named by `key`. */
  static at(keyHashA: number, keyHashB: number, index: number): Rng {
    return new Rng(keyHashA, keyHashB, avalanche(index ^ 0x9e3779b9), index + 1, keyHashB);
  }

  static forKey(key: string, index = 0): Rng {
    return Rng.at(hash32(key, 1), hash32(key, 2), index);
  }

  /** Next unsigned 32-bit value. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  /** Integer in [min, max] drawn log-uniformly: small values common, large ones rare. */
  logInt(min: number, max: number): number {
    const lo = Math.log(Math.max(1, min));
    const hi = Math.log(Math.max(1, max));
    return Math.min(max, Math.max(min, Math.round(Math.exp(lo + this.float() * (hi - lo)))));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.float() * values.length)];
  }

  /** `count` distinct values of `values` (fewer when values is shorter), in drawn order. */
  sample<T>(values: readonly T[], count: number): T[] {
    const pool = values.slice();
    const out: T[] = [];
    while (out.length < count && pool.length > 0) {
      out.push(pool.splice(Math.floor(this.float() * pool.length), 1)[0]);
    }
    return out;
  }

  /** A string of `n` decimal digits (may start with 0). */
  digits(n: number): string {
    let out = '';
    while (out.length < n) {
      const chunk = Math.min(9, n - out.length);
      out += String(this.next() % 10 ** chunk).padStart(chunk, '0');
    }
    return out;
  }

  /** `n` characters of base64url (the alphabet of shortcodes and video IDs). */
  base64url(n: number): string {
    let out = '';
    let bits = 0;
    let left = 0;
    for (let i = 0; i < n; i++) {
      if (left === 0) {
        bits = this.next();
        left = 5;
      }
      out += BASE64URL[bits & 63];
      bits >>>= 6;
      left--;
    }
    return out;
  }

  base62(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += BASE62[this.next() % 62];
    return out;
  }
}

/**
 * Six decimal digits that differ for every index below one million (for a fixed salt): the
 * tail of list item IDs, so the IDs of one result never collide. 738917 is coprime to 10^6,
 * so index -> tail is a bijection.
 */
export function uniqueDigits(index: number, salt = 0): string {
  return String((index * 738917 + (salt % 1_000_000)) % 1_000_000).padStart(6, '0');
}

/** Four base64url characters that differ for every index below 2^24 (a bijection on 24 bits). */
export function uniqueChars(index: number, salt = 0): string {
  let x = Math.imul(index, 0x2c1b3c6d) & 0xffffff;
  x ^= (salt ^ 0x5a3c96) & 0xffffff;
  x ^= x >>> 12;
  let out = '';
  for (let i = 0; i < 4; i++) {
    out += BASE64URL[x & 63];
    x >>>= 6;
  }
  return out;
}
