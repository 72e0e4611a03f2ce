import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

/**
 * Webhook events signed and sent as Stripe sends them: the JSON payload POSTed with
 * `Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<payload>" keyed by the
 * endpoint's secret>`, signed afresh at each attempt. Events go out one after another in the order
 * they were emitted (each first attempt waits for the one before); an attempt that fails (no 2xx,
 * a network error or a timeout) is tried again after the next delay of the schedule, without
 * holding up later events (so, as from Stripe, a retried event can arrive after newer ones).
 */
export function signatureHeader(payload: string, secret: string, timestamp: number): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

export interface Delivery {
  eventId: string;
  attempt: number;
  status: number | null;
  error?: string;
  /** When the attempt ended (epoch milliseconds). */
  at: number;
}

export interface SenderOptions {
  secret: string;
  retryDelaysMs: number[];
  timeoutMs: number;
  deliveries: Delivery[];
  log: (message: string) => void;
}

const USER_AGENT = 'Stripe/1.0 (+https://stripe.com/docs/webhooks)';

export class WebhookSender {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private waiters: Array<() => void> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<http.ClientRequest>();
  private closed = false;

  constructor(private readonly options: SenderOptions) {}

  /** Queues `payload` (the event's JSON) for `url`. */
  send(eventId: string, payload: string, url: string): void {
    if (this.closed) return;
    this.pending += 1;
    this.chain = this.chain.then(() => this.attempt(eventId, payload, url, 1));
  }

  /** Resolves when every queued event has been delivered or given up. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const request of this.inFlight) request.destroy();
    this.pending = 0;
    this.release();
  }

  private release(): void {
    if (this.pending > 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private async attempt(eventId: string, payload: string, url: string, attempt: number): Promise<void> {
    if (this.closed) return;
    const { status, error } = await this.post(url, payload);
    if (this.closed) return;
    this.options.deliveries.push({ eventId, attempt, status, ...(error ? { error } : {}), at: Date.now() });
    const ok = status !== null && status >= 200 && status < 300;
    this.options.log(`webhook ${eventId} attempt ${attempt} → ${status ?? error}`);
    const delay = this.options.retryDelaysMs[attempt - 1];
    if (ok || delay === undefined) {
      this.pending -= 1;
      this.release();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.attempt(eventId, payload, url, attempt + 1);
    }, delay);
    this.timers.add(timer);
  }

  private post(url: string, payload: string): Promise<{ status: number | null; error?: string }> {
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        resolve({ status: null, error: `invalid URL ${url}` });
        return;
      }
      const body = Buffer.from(payload, 'utf8');
      const client = target.protocol === 'https:' ? https : http;
      const request = client.request(target, {
        method: 'POST',
        agent: false,
        timeout: this.options.timeoutMs,
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': body.length,
          'User-Agent': USER_AGENT,
          Accept: '*/*; q=0.5, application/xml',
          'Cache-Control': 'no-cache',
          'Stripe-Signature': signatureHeader(payload, this.options.secret, Math.floor(Date.now() / 1000)),
        },
      });
      this.inFlight.add(request);
      const done = (result: { status: number | null; error?: string }) => {
        this.inFlight.delete(request);
        resolve(result);
      };
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => done({ status: response.statusCode ?? null }));
        response.on('error', (e) => done({ status: response.statusCode ?? null, error: e.message }));
      });
      request.on('timeout', () => request.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      request.on('error', (e) => done({ status: null, error: e.message }));
      request.end(body);
    });
  }
}
