import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { AddressRefused, forbiddenRange, generateSecret, retryDelayMs, signatureHeaders, WebhookSender } from '../src';

/** Signing checked by the scheme's own verifier; the address guard's ranges; the sender's rules against loopback servers. */
describe('signing', () => {
  it('makes whsec_ secrets of 32 random bytes, and signatures standardwebhooks verifies', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test', data: { é: 'ü' } });
    const headers = signatureHeaders([secret], 'evt_1', Math.floor(Date.now() / 1000), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow(/No matching signature/);
    const both = signatureHeaders([generateSecret(), secret], 'evt_1', Math.floor(Date.now() / 1000), body);
    expect(both['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(body, both)).toEqual(JSON.parse(body));
  });
});

describe('forbiddenRange', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
  ])('refuses %s (%s)', (address, range) => {
    expect(forbiddenRange(address)).toBe(range);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:93.184.216.34'])('allows %s', (address) => {
    expect(forbiddenRange(address)).toBeNull();
  });
});

describe('retryDelayMs', () => {
  it('follows the schedule with up to 10 % added, then stops', () => {
    expect(retryDelayMs([5, 300], 1, () => 0)).toBe(5000);
    expect(retryDelayMs([5, 300], 2, () => 1)).toBe(330_000);
    expect(retryDelayMs([5, 300], 3)).toBeNull();
  });
});

describe('WebhookSender', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(302, { Location: '/ok' }).end();
      else res.writeHead(req.url === '/ok' ? 200 : 500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const request = (path: string, host = '127.0.0.1') => ({ url: `http://${host}:${port}${path}`, body: '{}', headers: {} });

  it('does not follow redirects, and counts only 2xx as success', async () => {
    const sender = new WebhookSender({ allowHttp: true, allowPrivate: true });
    expect(await sender.send(request('/ok'))).toEqual({ ok: true, status: 200, error: null });
    expect(await sender.send(request('/redirect'))).toEqual({ ok: false, status: 302, error: 'HTTP 302 (redirects are not followed)' });
    expect(await sender.send(request('/boom'))).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
    sender.close();
  });

  it('refuses loopback literals and names resolving to them, at the connection', async () => {
    const calls: string[] = [];
    const sender = new WebhookSender({
      allowHttp: true,
      allowPrivate: false,
      resolve: (host) => {
        calls.push(host);
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      },
    });
    const literal = await sender.send(request('/ok'));
    expect(literal).toMatchObject({ ok: false, status: null });
    expect(literal.error).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    const named = await sender.send(request('/ok', 'receiver.test'));
    expect(named).toMatchObject({ ok: false, status: null });
    expect(named.error).toMatch(/receiver\.test resolves to a non-public address; webhooks may only reach public addresses/);
    expect(named.error).not.toMatch(/127\.0\.0\.1|loopback/);
    expect(calls).toEqual(['receiver.test']);
    await expect(sender.checkUrl(`https://receiver.test/x`)).rejects.toBeInstanceOf(AddressRefused);
    await expect(sender.checkUrl(`http://receiver.test/x`)).rejects.toThrow(/non-public/);
    await expect(sender.checkUrl(`https://receiver.test/x`)).rejects.toMatchObject({ setting: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' });
    sender.close();
  });

  it('refuses http unless allowed', async () => {
    const sender = new WebhookSender({ allowHttp: false, allowPrivate: true });
    expect(await sender.send(request('/ok'))).toEqual({ ok: false, status: null, error: 'refused: the URL must use https' });
    await expect(sender.checkUrl(`http://127.0.0.1:${port}/ok`)).rejects.toThrow(/must use https/);
    await expect(sender.checkUrl(`http://127.0.0.1:${port}/ok`)).rejects.toMatchObject({ setting: 'WEBHOOK_ALLOW_HTTP' });
    sender.close();
  });
});
