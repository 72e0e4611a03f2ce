import type { Logger } from 'pino';

/**
 * Errors that mean a dependency (Postgres or Redis) cannot be reached right now, as opposed to
 * a fault of the request or of the code: the connection was refused, reset or timed out, the
 * server is shutting down or starting up, or it has no connection slot left. They are
 * temporary: a request that meets one answers 503 with Retry-After, a loop waits and tries
 * again, and the outage is logged once when it starts and once when it ends (OutageLog).
 */
const UNAVAILABLE_CODES = new Set([
  // Postgres SQLSTATEs: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections,
  // the connection_exception class.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  // Socket errors.
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /is not queryable/i,
  /the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)/i,
  /terminating connection due to administrator command/i,
  /\bECONNREFUSED\b|\bECONNRESET\b|\bEPIPE\b|\bETIMEDOUT\b/,
  /Connection is closed/i,
  /Stream isn't writeable and enableOfflineQueue options is false/i,
  /Reached the max retries per request limit/i,
  /Command timed out/i,
  /connect ETIMEDOUT/i,
];

export function isUnavailableError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth += 1) {
    if (typeof e === 'string') return UNAVAILABLE_MESSAGES.some((re) => re.test(e as string));
    if (typeof e !== 'object') return false;
    const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
    // An AggregateError (several addresses refused) counts when its parts do.
    if (Array.isArray(errors) && errors.length > 0 && errors.every((part) => isUnavailableError(part))) return true;
    e = cause;
  }
  return false;
}

/** An object thrown without a message: an Error by its name (what String() gives), anything else as JSON. */
function describe(error: object): string {
  if (error instanceof Error) return error.name;
  try {
    return JSON.stringify(error) ?? Object.prototype.toString.call(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

/** The one-line description of a fault for a log record: code and message, never a stack. */
export function faultOf(error: unknown): { code?: string; message: string } {
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' && message ? message : describe(error);
    return typeof code === 'string' ? { code, message: text } : { message: text };
  }
  return { message: String(error) };
}

/**
 * Failures met this soon after an outage ended belong to it: connections opened before it (idle
 * in a pool) report their loss when they are next used, after a new connection already answered.
 */
export const OUTAGE_STRAGGLER_MS = 5000;

/**
 * One structured warning when a dependency becomes unreachable and one when it answers again,
 * however many requests, connections or loops meet the outage in between (stragglers of the
 * outage just ended included: a new outage is only reported once OUTAGE_STRAGGLER_MS have passed
 * since the last one ended, which delays its warning by that much at most).
 */
export class OutageLog {
  private since: number | null = null;
  private failures = 0;
  private endedAt: number | null = null;

  constructor(
    private readonly log: Logger,
    readonly dependency: 'postgres' | 'redis',
    private readonly now: () => number = Date.now,
  ) {}

  get down(): boolean {
    return this.since !== null;
  }

  /** A failure met while talking to the dependency. Only availability faults open an outage. */
  failed(error: unknown): void {
    if (!isUnavailableError(error)) return;
    if (this.since === null && this.endedAt !== null && this.now() - this.endedAt < OUTAGE_STRAGGLER_MS) return;
    this.failures += 1;
    if (this.since !== null) return;
    this.since = this.now();
    this.log.warn({ dependency: this.dependency, outage: 'started', fault: faultOf(error) }, `${this.dependency} unavailable`);
  }

  /** The dependency answered. */
  succeeded(): void {
    if (this.since === null) return;
    const downMs = this.now() - this.since;
    const failures = this.failures;
    this.endedAt = this.now();
    this.since = null;
    this.failures = 0;
    this.log.warn({ dependency: this.dependency, outage: 'ended', downMs, failures }, `${this.dependency} available again`);
  }
}
