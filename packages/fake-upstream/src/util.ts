/** Shared pieces of the fake upstream: request/response types, deterministic data helpers. */

export interface FakeRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON or form body; null when none. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeResponse {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export type MisbehaviourKind =
  | 'rate_limit'
  | 'server_error'
  | 'slow'
  | 'reset'
  | 'quota'
  | 'errors_200'
  | 'token_invalid'
  /** X pay-per-use credits exhausted (402); the vendor's credits exhausted (402). */
  | 'credits'
  /** Graph: a permission the token lacks (code 10 / 200-299, or 100 subcode 33 on a node). */
  | 'permission'
  /** TikTok: the search_id of a video query has expired. */
  | 'search_expired'
  /** Answer with `reply` as it is (a published example reply, replayed to an adapter). */
  | 'reply';

export interface MisbehaveRule {
  /** Requests whose path starts with this prefix are affected. */
  path: string;
  kind: MisbehaviourKind;
  /** How many matching requests misbehave (default 1). */
  times?: number;
  /** slow: delay before the normal answer. */
  delayMs?: number;
  /** server_error: the status (default 503). */
  status?: number;
  /** rate_limit / quota: Retry-After seconds to send. */
  retryAfterSeconds?: number;
  /** rate_limit (X): x-rate-limit-reset = now + this many seconds (default 60). */
  resetInSeconds?: number;
  /** rate_limit (Graph): estimated_time_to_regain_access in X-Business-Use-Case-Usage (default 5). */
  regainMinutes?: number;
  /** reply: the status, headers and body to answer with. */
  reply?: FakeResponse;
}

/** One upstream API served under a path prefix. */
export interface FakeApi {
  name: string;
  matches(path: string): boolean;
  handle(req: FakeRequest): FakeResponse;
  misbehave(rule: MisbehaveRule, req: FakeRequest): FakeResponse;
  reset?(): void;
}

/** 32-bit FNV-1a hash with an avalanche step. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** A deterministic integer in [min, max] for a key. */
export function pick(key: string, min: number, max: number): number {
  return min + (hash(key) % (max - min + 1));
}

const WORDS = [
  'morning',
  'studio',
  'city',
  'recipe',
  'travel',
  'music',
  'review',
  'update',
  'behind',
  'scenes',
  'launch',
  'weekend',
  'tips',
  'story',
  'live',
];

export function sentence(key: string, words = 8): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[hash(`${key}:${i}`) % WORDS.length]);
  const text = out.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Opaque page tokens that carry an offset. */
export function encodeToken(prefix: string, offset: number): string {
  return Buffer.from(`${prefix}:${offset}`).toString('base64url');
}

export function decodeToken(prefix: string, token: string | undefined): number | null {
  if (!token) return 0;
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const m = new RegExp(`^${prefix}:(\\d+)$`).exec(text);
  return m ? Number(m[1]) : null;
}

export function bearer(req: FakeRequest): string | null {
  const h = req.headers.authorization;
  const v = Array.isArray(h) ? h[0] : h;
  const m = v ? /^Bearer\s+(.+)$/i.exec(v) : null;
  return m?.[1] ?? null;
}

/** A marker that serializes as a bare JSON integer (for 64-bit IDs). */
export class BigId {
  constructor(readonly digits: string) {}
  toJSON(): string {
    return `__bigint__${this.digits}__`;
  }
}

export function serialize(body: unknown): string {
  return JSON.stringify(body).replace(/"__bigint__(\d+)__"/g, '$1');
}

/**
 * Where a platform's published example reply and its field table disagree on a value's form
 * (TikTok's `has_more: "true"` against the table's bool), the fake sends either form:
 * `table` always the table's, `example` always the example's, `random` (the default) picks per
 * reply from a seed, so a run meets both. The seed is FAKE_UPSTREAM_SEED when set, else random;
 * it is printed when the fake starts, so a failing run can be replayed.
 */
export type FormMode = 'table' | 'example' | 'random';

export interface Forms {
  mode: FormMode;
  seed: number;
  /** True when this reply should carry the example's form of `key`. */
  example(key: string): boolean;
}

export function createForms(mode: FormMode, seed: number): Forms {
  let n = 0;
  return {
    mode,
    seed,
    example: (key) => (mode === 'example' ? true : mode === 'table' ? false : hash(`${seed}:${key}:${n++}`) % 2 === 0),
  };
}
