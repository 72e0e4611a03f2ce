import { Writable } from 'node:stream';
import { createLogger, isUnavailableError, OUTAGE_STRAGGLER_MS, OutageLog, redactHeaders, redactUrl } from '../src';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _e, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const adminShutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

describe('isUnavailableError', () => {
  it.each([
    ['refused', refused],
    ['57P01', adminShutdown],
    ['57P03', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['terminated', new Error('Connection terminated unexpectedly')],
    ['not queryable', new Error('Client has encountered a connection error and is not queryable')],
    ['ioredis offline', new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['a cause', new Error('wrapped', { cause: refused })],
    ['a message string', 'connect ECONNREFUSED 127.0.0.1:6379'],
  ])('%s is an outage', (_name, error) => expect(isUnavailableError(error)).toBe(true));

  it.each([
    ['a syntax error', Object.assign(new Error('syntax error'), { code: '42601' })],
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['pool exhaustion (overload, not an outage)', new Error('timeout exceeded when trying to connect')],
    ['a plain error', new TypeError('x is undefined')],
  ])('%s is not', (_name, error) => expect(isUnavailableError(error)).toBe(false));
});

describe('OutageLog', () => {
  it('writes one warning when the outage starts and one when it ends, whatever happens between', () => {
    const { lines, stream } = capture();
    const log = createLogger({ logLevel: 'info' }, {}, stream);
    let now = 1000;
    const outage = new OutageLog(log, 'postgres', () => now);
    outage.succeeded();
    outage.failed(new Error('syntax error'));
    expect(lines).toEqual([]);
    outage.failed(adminShutdown);
    for (let i = 0; i < 50; i += 1) outage.failed(refused);
    now = 3500;
    outage.succeeded();
    outage.succeeded();
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        dependency: 'postgres',
        outage: 'started',
        fault: { code: '57P01', message: 'terminating connection due to administrator command' },
        msg: 'postgres unavailable',
      }),
      expect.objectContaining({
        level: 40,
        dependency: 'postgres',
        outage: 'ended',
        downMs: 2500,
        failures: 51,
        msg: 'postgres available again',
      }),
    ]);
    expect(outage.down).toBe(false);
  });

  it('counts a pooled connection that reports its loss just after the outage ended as part of it, and a later fault as a new outage', () => {
    const { lines, stream } = capture();
    const log = createLogger({ logLevel: 'info' }, {}, stream);
    let now = 1000;
    const outage = new OutageLog(log, 'postgres', () => now);
    outage.failed(adminShutdown);
    now = 2000;
    outage.succeeded();
    now = 2000 + OUTAGE_STRAGGLER_MS - 1;
    outage.failed(adminShutdown);
    expect(outage.down).toBe(false);
    expect(lines.map((l) => l.outage)).toEqual(['started', 'ended']);
    now = 2000 + OUTAGE_STRAGGLER_MS;
    outage.failed(refused);
    expect(outage.down).toBe(true);
    expect(lines.map((l) => l.outage)).toEqual(['started', 'ended', 'started']);
  });

  it('the logger writes other warnings about an outage fault at debug, and everything else as asked', () => {
    const { lines, stream } = capture();
    const log = createLogger({ logLevel: 'info' }, {}, stream);
    log.warn({ err: refused, jobId: 'job_1' }, 'attempt failed');
    log.error({ err: adminShutdown }, 'scheduler pass failed');
    log.warn({ err: new Error('boom') }, 'real problem');
    log.warn('no err at all');
    expect(lines.map((l) => l.msg)).toEqual(['real problem', 'no err at all']);
    const debug = capture();
    createLogger({ logLevel: 'debug' }, {}, debug.stream).warn({ err: refused }, 'attempt failed');
    expect(debug.lines).toEqual([expect.objectContaining({ level: 20, msg: 'attempt failed' })]);
  });
});

describe('redaction', () => {
  it('redacts credential-like query parameters, keeping the rest as sent', () => {
    expect(redactUrl('/v1/jobs?api_key=sdx_live_x&limit=5&token=t&Access_Token=a&apiKey=k&key=k2&x=1#frag')).toBe(
      '/v1/jobs?api_key=[Redacted]&limit=5&token=[Redacted]&Access_Token=[Redacted]&apiKey=[Redacted]&key=[Redacted]&x=1#frag',
    );
    expect(redactUrl('/v1/jobs?api%5Fkey=sdx&%ZZ=1')).toBe('/v1/jobs?api%5Fkey=[Redacted]&%ZZ=1');
    expect(redactUrl('/v1/jobs')).toBe('/v1/jobs');
  });

  it('redacts any auth-like header', () => {
    expect(
      redactHeaders({
        authorization: 'Bearer x',
        'proxy-authorization': 'Basic y',
        'x-api-key': 'k',
        cookie: 'a=b',
        'x-upstream-token': 't',
        'x-session-id': 's',
        'user-agent': 'curl',
        'content-length': '2',
      }),
    ).toEqual({
      authorization: '[Redacted]',
      'proxy-authorization': '[Redacted]',
      'x-api-key': '[Redacted]',
      cookie: '[Redacted]',
      'x-upstream-token': '[Redacted]',
      'x-session-id': '[Redacted]',
      'user-agent': 'curl',
      'content-length': '2',
    });
  });

  it('redacts the tokens of the URLs other headers carry: Referer, X-Original-URL, and a URL inside a parameter', () => {
    const token = 'Zk3x9Qm2Vb7cT1rY8uN4wE6pL0aS5dHgJfKqXzCvBn0';
    const redacted = redactHeaders({
      referer: `https://sdx.example.com/console/verify?token=${token}`,
      'x-original-url': `/console/reset?lang=en&token=${token}`,
      'x-forwarded-uri': [`/console/invitations/accept?token=${token}`],
      accept: 'text/html, */*;q=0.8',
    });
    expect(redacted).toEqual({
      referer: 'https://sdx.example.com/console/verify?token=[Redacted]',
      'x-original-url': '/console/reset?lang=en&token=[Redacted]',
      'x-forwarded-uri': ['/console/invitations/accept?token=[Redacted]'],
      accept: 'text/html, */*;q=0.8',
    });
    expect(JSON.stringify(redacted)).not.toContain(token);
    expect(redactUrl(`/console/signup?next=${encodeURIComponent(`/invitations/accept?token=${token}`)}`)).toBe(
      '/console/signup?next=[Redacted]',
    );
    expect(redactUrl('/console/signup?next=%2Fjobs%3Fstatus%3Dfailed')).toBe('/console/signup?next=%2Fjobs%3Fstatus%3Dfailed');
  });
});
