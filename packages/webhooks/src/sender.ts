import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import got, { type RequestError } from 'got';
import { AddressRefused, type AddressPolicy, checkedAddresses, guardedLookup, hostOf } from './address-guard';

/** A delivery attempt gets this long, from connecting to the last byte of the answer (extensions.md 5). */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** Of a receiver's answer, at most this much is read (and then dropped): only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface WebhookPolicy extends AddressPolicy {
  /** WEBHOOK_ALLOW_HTTP=1: http URLs besides https. */
  allowHttp: boolean;
}

export interface SendRequest {
  url: string;
  /** The exact bytes to send (and that were signed). */
  body: string;
  headers: Record<string, string>;
}

export interface SendOutcome {
  /** A 2xx answer. */
  ok: boolean;
  /** The receiver's HTTP status; null when none came (refused, unreachable, timed out). */
  status: number | null;
  /** Why the attempt failed; null on success. */
  error: string | null;
}

/** The refusal of an http URL while http is not allowed (WEBHOOK_ALLOW_HTTP would allow it). */
const HTTPS_ONLY = 'the URL must use https';

/** Why a URL may not be a webhook's, or null when it may (syntax and scheme only; addresses: checkUrl). */
export function urlProblem(raw: string, policy: Pick<WebhookPolicy, 'allowHttp'>): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return policy.allowHttp ? 'the URL must use https or http' : HTTPS_ONLY;
  }
  if (url.username || url.password) return 'the URL may not carry a user name or password';
  if (!url.hostname) return 'the URL has no host';
  return null;
}

/**
 * Sends webhook messages: POST, the given bytes, a 10 s timeout for the whole exchange,
 * redirects not followed, any 2xx a success, never a retry here (the delivery schedule decides).
 * The connection goes only to addresses the guard checked. Connections are kept alive per
 * receiver, so a busy receiver is not paid a handshake per message.
 */
export class WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
    https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  private readonly lookup;

  constructor(readonly policy: WebhookPolicy) {
    this.lookup = guardedLookup(policy);
  }

  /** Refuses (AddressRefused) a URL with a bad scheme or one that reaches a refused address. */
  async checkUrl(raw: string): Promise<void> {
    const problem = urlProblem(raw, this.policy);
    if (problem) throw new AddressRefused(problem, problem === HTTPS_ONLY ? 'WEBHOOK_ALLOW_HTTP' : null);
    await checkedAddresses(hostOf(new URL(raw)), this.policy);
  }

  async send(request: SendRequest): Promise<SendOutcome> {
    const problem = urlProblem(request.url, this.policy);
    if (problem) return { ok: false, status: null, error: `refused: ${problem}` };
    // An IP literal is connected to as it is, without a lookup: it is checked here. A name is
    // checked by the lookup of the connection.
    const host = hostOf(new URL(request.url));
    if (isIP(host) !== 0) {
      try {
        await checkedAddresses(host, this.policy);
      } catch (error) {
        return { ok: false, status: null, error: `refused: ${(error as Error).message}` };
      }
    }
    const answer = got
      .post(request.url, {
        body: request.body,
        headers: { 'content-type': 'application/json', 'user-agent': 'sdx-webhooks/1.0', ...request.headers },
        timeout: { request: DELIVERY_TIMEOUT_MS },
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        lookup: this.lookup as never,
        agent: this.agents,
        decompress: false,
      })
      .on('downloadProgress', (progress) => {
        if (progress.transferred > MAX_ANSWER_BYTES) answer.cancel('answer too large');
      });
    try {
      const response = await answer;
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, error: ok ? null : describeStatus(response.statusCode) };
    } catch (error) {
      return { ok: false, status: null, error: describeFailure(error as RequestError) };
    }
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

function describeStatus(status: number): string {
  return status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
}

function describeFailure(error: RequestError): string {
  if (error.name === 'TimeoutError') return `timed out: no complete answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
  if (error.name === 'CancelError') return 'the answer was larger than 64 KB';
  const code = (error as { code?: string }).code;
  if (code === 'EADDRREFUSED') return `refused: ${error.message}`;
  return code ? `${code}: ${error.message}` : error.message;
}
