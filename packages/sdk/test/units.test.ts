import { readEvents, signWebhook, verifyWebhook, WebhookVerificationError } from '@sdx/sdk';
import { errorFromResponse, InsufficientCreditsError, parseRetryAfter, RateLimitError } from '../src/errors';
import { filenameOf } from '../src/resources/exports';
import { nextFromLink } from '../src/paging';

/** The SDK's pure parts: event-stream parsing, webhook signatures, headers. */

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function collect(body: ReadableStream<Uint8Array>) {
  const out = [];
  for await (const event of readEvents(body)) out.push(event);
  return out;
}

describe('readEvents', () => {
  it('parses events split anywhere, with CRLF, CR, comments, multi-line data, ids and a BOM', async () => {
    const text =
      '\uFEFF: hello\r\nevent: status\r\ndata: {"a":\r\ndata: 1}\r\nid: 7\r\n\r\n:keepalive\n\nevent: progress\rdata: x\r\rdata:no-space\n\n';
    for (const size of [1, 2, 3, 5, 8, text.length]) {
      const chunks: string[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
      expect(await collect(streamOf(...chunks))).toEqual([
        { event: 'status', data: '{"a":\n1}', id: '7' },
        { event: 'progress', data: 'x', id: '7' },
        { event: 'message', data: 'no-space', id: '7' },
      ]);
    }
  });

  it('drops an event the stream cut before its blank line', async () => {
    expect(await collect(streamOf('data: whole\n\n', 'data: cut'))).toEqual([{ event: 'message', data: 'whole' }]);
  });
});

describe('webhook signatures (Standard Webhooks)', () => {
  // The example of the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"test": 2432232314}';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const timestamp = 1614265330;
  const now = timestamp * 1000;

  it("signs as the scheme's reference does", async () => {
    expect(await signWebhook(body, secret, { id, timestamp })).toEqual({
      'webhook-id': id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('verifies a delivery from fetch Headers or Node headers, with bytes or text, and during a rotation', async () => {
    const headers = await signWebhook(body, secret, { id, timestamp });
    expect(await verifyWebhook(body, new Headers(headers), secret, { now })).toEqual({ test: 2432232314 });
    expect(
      await verifyWebhook(new TextEncoder().encode(body), { ...headers, 'content-type': 'application/json' }, secret, { now }),
    ).toEqual({ test: 2432232314 });
    const other = 'whsec_' + btoa('another secret of 32 bytes......');
    const rotated = { ...headers, 'webhook-signature': `v1,bm9wZQ== ${headers['webhook-signature']}` };
    expect(await verifyWebhook(body, rotated, [other, secret], { now })).toEqual({ test: 2432232314 });
  });

  it('refuses a changed body, a wrong secret, a missing header and an old timestamp', async () => {
    const headers = await signWebhook(body, secret, { id, timestamp });
    const cases: Array<Promise<unknown>> = [
      verifyWebhook('{"test": 1}', headers, secret, { now }),
      verifyWebhook(body, headers, 'whsec_' + btoa('wrong'), { now }),
      verifyWebhook(body, { 'webhook-id': id, 'webhook-timestamp': String(timestamp) }, secret, { now }),
      verifyWebhook(body, headers, secret, { now: now + 301_000 }),
      verifyWebhook(body, { ...headers, 'webhook-id': 'msg_other' }, secret, { now }),
    ];
    for (const result of cases) await expect(result).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});

describe('headers', () => {
  it('reads the next page of a Link header, ignoring other relations', () => {
    expect(nextFromLink('<https://api.example.com/v1/jobs?limit=2&starting_after=job_9&status=completed>; rel="next"')).toEqual({
      limit: '2',
      starting_after: 'job_9',
      status: 'completed',
    });
    expect(nextFromLink('</v1/jobs?starting_after=job_1>; rel="prev", </v1/jobs?starting_after=job_3>; rel=next')).toEqual({
      starting_after: 'job_3',
    });
    expect(nextFromLink('</v1/jobs?starting_after=job_1>; rel="prev"')).toBeNull();
    expect(nextFromLink(null)).toBeNull();
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:05 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(5);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it('reads the file name of a Content-Disposition', () => {
    expect(filenameOf('attachment; filename="job_1.csv"')).toBe('job_1.csv');
    expect(filenameOf('attachment; filename="a.csv"; filename*=UTF-8\'\'r%C3%A9sultats.csv')).toBe('résultats.csv');
    expect(filenameOf('attachment')).toBeNull();
  });

  it('types errors by status and identifier', () => {
    const headers = new Headers({ 'x-request-id': 'req_1', 'retry-after': '12' });
    expect(errorFromResponse(429, { detail: { error: 'rate_limit_exceeded', message: 'x' } }, headers)).toMatchObject({
      retryAfter: 12,
      requestId: 'req_1',
      code: 'rate_limit_exceeded',
    });
    expect(errorFromResponse(429, { detail: { error: 'rate_limit_exceeded', message: 'x' } }, headers)).toBeInstanceOf(RateLimitError);
    const credits = errorFromResponse(
      402,
      { detail: { error: 'insufficient_credits', message: 'x', available: 3, reserved: 4, required: 9 } },
      headers,
    );
    expect(credits).toBeInstanceOf(InsufficientCreditsError);
    expect(credits).toMatchObject({ available: 3, reserved: 4, required: 9 });
    expect(errorFromResponse(502, '<html>bad gateway</html>', headers)).toMatchObject({
      code: 'http_502',
      detail: '<html>bad gateway</html>',
    });
  });
});
