import { createServer } from 'node:net';
import { sql } from 'kysely';
import { type AppConfig, loadConfig } from '@sdx/config';
import type { Db } from '@sdx/db';
import {
  claimDueMail,
  type Clock,
  MAIL_LEASE_MS,
  MAIL_MAX_ATTEMPTS,
  mailRetryDelay,
  newId,
  queueMail,
  recentMailCount,
  sendDueMail,
} from '@sdx/domain/testing';
import { createMailTransport, verificationMail } from '@sdx/mail';
import { BackgroundRunner, createRuntime, taskNamed } from '@sdx/runtime';
import pino from 'pino';
import {
  createTestDb,
  eventually,
  signUpUser,
  type SmtpCatcher,
  startSmtpCatcher,
  startTestStack,
  testRedisUrl,
  type TestStack,
} from '@sdx/testing';

/**
 * extensions-2.md 2 and issue 32 deliverable 1: mail goes through an outbox written in the
 * transaction of its change, and is sent to a real SMTP server on loopback with retries.
 */
const APP_URL = 'http://console.test';
let smtp: SmtpCatcher;

beforeAll(async () => {
  smtp = await startSmtpCatcher();
});
afterAll(async () => {
  await smtp.close();
});

/** A loopback port with nothing listening on it. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the mail outbox, sent by sendDueMail', () => {
  let db: Db;
  let url: string;
  let drop: () => Promise<void>;
  let config: AppConfig;
  const clock: Clock & { at: number } = { at: Date.now(), now: (): Date => new Date(clock.at) };
  let seq = 0;
  const address = () => `outbox${++seq}.${Date.now().toString(36)}@example.com`;

  beforeAll(async () => {
    ({ db, url, drop } = await createTestDb());
    config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: 'postgres://unused/x',
      REDIS_URL: testRedisUrl(),
      SMTP_URL: smtp.url,
      APP_URL,
      MAIL_FROM: 'Service <no-reply@console.test>',
    });
  });
  afterAll(async () => {
    await drop();
  });
  beforeEach(async () => {
    clock.at = Date.now() + 1000;
    // Each test sends only its own mail.
    await db.deleteFrom('mail_outbox').execute();
  });

  const rowsTo = (to: string) => db.selectFrom('mail_outbox').selectAll().where('recipient', '=', to).execute();

  it('a mail queued in a transaction that rolls back is never written, so never sent', async () => {
    const kept = address();
    const dropped = address();
    await expect(
      db.transaction().execute(async (tx) => {
        expect(
          await queueMail(tx, config, {
            to: dropped,
            template: 'verify_email',
            ...verificationMail({ appUrl: APP_URL, token: 'rolled-back' }),
          }),
        ).toBe(true);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await db
      .transaction()
      .execute((tx) =>
        queueMail(tx, config, { to: kept, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'committed' }) }),
      );
    const transport = createMailTransport(smtp.url);
    try {
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 1, sent: 1 });
    } finally {
      transport.close();
    }
    await smtp.waitFor(kept);
    expect(await rowsTo(dropped)).toEqual([]);
    expect(smtp.messages.filter((m) => m.to === dropped)).toEqual([]);
  });

  it('without SMTP_URL nothing is queued', async () => {
    const to = address();
    expect(await queueMail(db, { ...config, smtpUrl: null }, { to, template: 'verify_email', subject: 's', text: 't', html: 'h' })).toBe(
      false,
    );
    expect(await rowsTo(to)).toEqual([]);
  });

  it('delivers a text and an HTML part from MAIL_FROM; the body is sealed at rest and dropped once sent', async () => {
    const to = address();
    const token = `secret-token-${Date.now()}`;
    await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token }) });
    const [queued] = await rowsTo(to);
    expect(queued).toMatchObject({ status: 'pending', attempts: 0, template: 'verify_email' });
    expect(queued.body_sealed).toMatch(/^sealed:v1:/);
    expect(queued.body_sealed).not.toContain(token);

    const transport = createMailTransport(smtp.url);
    try {
      await sendDueMail(db, config, transport, clock);
    } finally {
      transport.close();
    }
    const mail = await smtp.waitFor(to);
    expect(mail.from).toBe('no-reply@console.test');
    expect(mail.subject).toBe(queued.subject);
    expect(mail.text).toContain(`${APP_URL}/console/verify?token=${token}`);
    expect(mail.html).toContain(`href="${APP_URL}/console/verify?token=${token}"`);
    expect(mail.raw).toMatch(/Content-Type: multipart\/alternative/i);

    const [sent] = await rowsTo(to);
    expect(sent).toMatchObject({ status: 'sent', attempts: 1, body_sealed: null, locked_until: null, last_error: null });
    expect(sent.sent_at).toEqual(clock.now());
    // No trace of the link's token is left anywhere in the outbox.
    const dump = await sql<{ dump: string }>`select coalesce(string_agg(row_to_json(m)::text, ''), '') as dump from mail_outbox m`.execute(
      db,
    );
    expect(dump.rows[0].dump).not.toContain(token);
    expect(dump.rows[0].dump).toContain(to);
  });

  it('a server that is down or refuses leaves the mail pending with its attempts counted and backed off; it goes out once the server is back', async () => {
    const to = address();
    await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'retry-me' }) });
    const down = createMailTransport(`smtp://127.0.0.1:${await deadPort()}`);
    try {
      expect(await sendDueMail(db, config, down, clock)).toMatchObject({ claimed: 1, sent: 0, retrying: 1, failed: 0 });
    } finally {
      down.close();
    }
    let [row] = await rowsTo(to);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, locked_until: null });
    expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
    expect(row.next_attempt_at.getTime()).toBe(clock.at + mailRetryDelay(1));
    expect(row.body_sealed).toMatch(/^sealed:v1:/);

    // Not due yet: nothing is tried before next_attempt_at.
    const transport = createMailTransport(smtp.url);
    try {
      clock.at += mailRetryDelay(1) - 1000;
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 0 });

      // Due: the server answers, but refuses (451) for now.
      smtp.refuse(true);
      clock.at += 1000;
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 1, retrying: 1 });
      [row] = await rowsTo(to);
      expect(row).toMatchObject({ status: 'pending', attempts: 2 });
      expect(row.last_error).toMatch(/451/);
      expect(row.next_attempt_at.getTime()).toBe(clock.at + mailRetryDelay(2));
      expect(mailRetryDelay(2)).toBeGreaterThan(mailRetryDelay(1));

      // Back: the next attempt delivers it.
      smtp.refuse(false);
      clock.at += mailRetryDelay(2);
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 1, sent: 1 });
    } finally {
      smtp.refuse(false);
      transport.close();
    }
    const mail = await smtp.waitFor(to);
    expect(mail.text).toContain('retry-me');
    expect((await rowsTo(to))[0]).toMatchObject({ status: 'sent', attempts: 3, body_sealed: null });
  });

  it(`gives a mail up after ${MAIL_MAX_ATTEMPTS} attempts and drops its body`, async () => {
    const to = address();
    await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'never' }) });
    const down = createMailTransport(`smtp://127.0.0.1:${await deadPort()}`);
    try {
      for (let attempt = 1; attempt <= MAIL_MAX_ATTEMPTS; attempt += 1) {
        const pass = await sendDueMail(db, config, down, clock);
        expect(pass).toMatchObject(attempt < MAIL_MAX_ATTEMPTS ? { claimed: 1, retrying: 1 } : { claimed: 1, failed: 1 });
        clock.at += mailRetryDelay(attempt);
      }
      expect(await sendDueMail(db, config, down, clock)).toMatchObject({ claimed: 0 });
    } finally {
      down.close();
    }
    expect((await rowsTo(to))[0]).toMatchObject({ status: 'failed', attempts: MAIL_MAX_ATTEMPTS, body_sealed: null });
  });

  it('a claim whose process died (lease expired) is sent again; a live lease is left alone', async () => {
    const to = address();
    await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'crashed' }) });
    // A sender claims the row, then dies before sending or recording anything.
    expect(await claimDueMail(db, clock)).toHaveLength(1);
    const transport = createMailTransport(smtp.url);
    try {
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 0 });
      clock.at += MAIL_LEASE_MS - 1000;
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 0 });
      clock.at += 1000;
      expect(await sendDueMail(db, config, transport, clock)).toMatchObject({ claimed: 1, sent: 1 });
    } finally {
      transport.close();
    }
    await smtp.waitFor(to);
    expect(smtp.messages.filter((m) => m.to === to)).toHaveLength(1);
    expect((await rowsTo(to))[0]).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('two senders at once send each mail once', async () => {
    const tos = Array.from({ length: 12 }, () => address());
    for (const to of tos)
      await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: to }) });
    const transports = [createMailTransport(smtp.url), createMailTransport(smtp.url)];
    try {
      const passes = await Promise.all(transports.map((t) => sendDueMail(db, config, t, clock)));
      const rest = await sendDueMail(db, config, transports[0], clock);
      expect(passes.reduce((n, p) => n + p.sent, rest.sent)).toBe(12);
    } finally {
      for (const t of transports) t.close();
    }
    for (const to of tos) await smtp.waitFor(to);
    for (const to of tos) expect(smtp.messages.filter((m) => m.to === to)).toHaveLength(1);
  });

  it('recentMailCount counts the templates asked for, to the address, in the window', async () => {
    const to = address();
    for (const template of ['reset_password', 'reset_password', 'verify_email']) {
      await queueMail(db, config, { to, template, subject: 's', text: 't', html: 'h' });
    }
    await queueMail(db, config, { to: address(), template: 'reset_password', subject: 's', text: 't', html: 'h' });
    await db
      .insertInto('mail_outbox')
      .values({
        id: newId('msg'),
        recipient: to,
        template: 'reset_password',
        subject: 'old',
        body_sealed: null,
        created_at: new Date(Date.now() - 2 * 3600_000),
      })
      .execute();
    expect(await recentMailCount(db, to, ['reset_password'], 3600_000)).toBe(2);
    expect(await recentMailCount(db, to, ['reset_password', 'verify_email'], 3600_000)).toBe(3);
    expect(await recentMailCount(db, to, ['reset_password'], 3 * 3600_000)).toBe(3);
    expect(await recentMailCount(db, to, [], 3600_000)).toBe(0);
  });

  it('the mail task sends what is due when kicked, and stops when its runner stops', async () => {
    const to = address();
    const runtime = createRuntime({ ...config, databaseUrl: url }, { name: 'test', providers: [], clock, log: pino({ level: 'silent' }) });
    const runner = new BackgroundRunner({
      tasks: [taskNamed('mail')],
      context: { services: runtime.services, redisUrl: config.redisUrl },
      everyMs: { mail: 60_000 },
    }).start();
    try {
      try {
        expect(runner.running).toEqual(['mail']);
        // The first pass, at start, finds nothing; the next is a minute away unless kicked.
        await new Promise((resolve) => setTimeout(resolve, 50));
        await runner.idle('mail');
        await queueMail(db, config, { to, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'kicked' }) });
        runner.kick('mail');
        await smtp.waitFor(to, 5000);
      } finally {
        await runner.stop();
      }
      const after = address();
      await queueMail(db, config, { to: after, template: 'verify_email', ...verificationMail({ appUrl: APP_URL, token: 'after-close' }) });
      runner.kick('mail');
      await runner.idle('mail');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await rowsTo(after))[0]).toMatchObject({ status: 'pending', attempts: 0 });
    } finally {
      await runtime.close();
    }
  });
});

describe('invitations through the outbox (HTTP)', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: { SMTP_URL: smtp.url, APP_URL, EMAIL_VERIFICATION: '0', SIGNUP_LIMIT_PER_HOUR: '1000' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  async function team(name: string) {
    const owner = await signUpUser(stack, { displayName: 'Olga' });
    const res = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name } });
    expect(res.status).toBe(201);
    return { owner, workspaceId: res.body.id as string };
  }

  it('POST /v1/workspaces/{id}/invitations mails the invitation: the inviter named, the name quoted, the accept link', async () => {
    const { owner, workspaceId } = await team('Crew <b>https://evil.example</b>');
    const to = `invitee.${Date.now().toString(36)}@example.com`;
    const res = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: to, role: 'member' },
    });
    expect(res.status).toBe(201);
    const mail = await smtp.waitFor(to, 10_000);
    expect(mail.text).toContain(res.body.accept_url);
    expect(res.body.accept_url).toBe(`${APP_URL}/console/invitations/accept?token=${encodeURIComponent(res.body.token)}`);
    expect(mail.text).toContain(`"Olga" <${owner.email}>`);
    expect(mail.text).toContain('"Crew <b>https[:]//evil[.]example</b>"');
    expect(mail.html).toContain('Crew &lt;b&gt;https[:]//evil[.]example&lt;/b&gt;');
    expect(mail.html).not.toContain('https://evil');
    expect(mail.html).toContain(`href="${res.body.accept_url}"`);
    // Sent, and the link (a secret) is gone from the outbox.
    await eventually(async () => {
      const row = await stack.runtime.db.selectFrom('mail_outbox').selectAll().where('recipient', '=', to).executeTakeFirst();
      return row?.status === 'sent' && row.body_sealed === null;
    });
  });

  it('at most 50 invitations per workspace per UTC day: the 50th is taken, the 51st is 429 rate_limit_exceeded until midnight', async () => {
    const { owner, workspaceId } = await team('Busy');
    // 49 sent today (some revoked or accepted: they count), and older ones that do not.
    const today = await sql<{ start: Date }>`select date_trunc('day', now() at time zone 'utc') at time zone 'utc' as start`.execute(
      stack.runtime.db,
    );
    const start = today.rows[0].start;
    const row = (i: number, createdAt: Date) => ({
      id: newId('inv'),
      workspace_id: workspaceId,
      email: `bulk${i}@example.com`,
      role: 'member' as const,
      token_hash: `hash-${workspaceId}-${i}`,
      invited_by: owner.userId,
      created_at: createdAt,
      expires_at: new Date(Date.now() + 86_400_000),
      revoked_at: i % 7 === 0 ? new Date() : null,
    });
    await stack.runtime.db
      .insertInto('invitations')
      .values([
        ...Array.from({ length: 49 }, (_, i) => row(i, new Date(start.getTime() + 1000))),
        ...Array.from({ length: 10 }, (_, i) => row(100 + i, new Date(start.getTime() - 1000))),
      ] as never)
      .execute();

    const fiftieth = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: 'fifty@example.com', role: 'member' },
    });
    expect(fiftieth.status).toBe(201);

    const before = Date.now();
    const refused = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: 'fifty-one@example.com', role: 'viewer' },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toEqual({
      error: 'rate_limit_exceeded',
      message: expect.stringContaining('50 invitations a day'),
      retry_after: expect.any(Number),
    });
    const nextMidnight = Date.UTC(new Date(before).getUTCFullYear(), new Date(before).getUTCMonth(), new Date(before).getUTCDate() + 1);
    const expected = Math.ceil((nextMidnight - before) / 1000);
    expect(Math.abs(refused.body.detail.retry_after - expected)).toBeLessThanOrEqual(2);
    expect(refused.headers['retry-after']).toBe(String(refused.body.detail.retry_after));
    // Refused: no invitation and no mail for it.
    expect(await stack.runtime.db.selectFrom('invitations').select('id').where('email', '=', 'fifty-one@example.com').execute()).toEqual(
      [],
    );
    expect(
      await stack.runtime.db.selectFrom('mail_outbox').select('id').where('recipient', '=', 'fifty-one@example.com').execute(),
    ).toEqual([]);

    // Another workspace has its own 50.
    const other = await team('Quiet');
    const elsewhere = await stack.api.post(`/v1/workspaces/${other.workspaceId}/invitations`, {
      headers: other.owner.write(),
      body: { email: 'fifty-one@example.com', role: 'viewer' },
    });
    expect(elsewhere.status).toBe(201);
  });
});
