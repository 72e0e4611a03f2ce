import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { sealerOf } from '@sdx/domain/testing';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * Rotating SECRETS_KEY (docs/deployment.md "Rotating SECRETS_KEY"): `npm run admin --
 * rotate-secrets` re-seals every sealed value (webhook secrets, TOTP secrets, unsent mail) that
 * is not under SECRETS_KEY, opening it with SECRETS_KEY_PREVIOUS; the values open to the same
 * plain text afterwards, a second run has nothing to do, and a value no key opens is reported
 * (exit 1) and left as it is.
 */
const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const resolver = (): Promise<LookupAddress[]> => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);
const keyOne = randomBytes(32);
const keyTwo = randomBytes(32);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ webhookResolver: resolver });
});
afterAll(async () => {
  await stack.close();
});

/** What `admin rotate-secrets --json` prints (the part these tests read). */
interface RotateReport {
  unopenable: number;
  columns: Array<{ table: string; column: string; resealed: number; unopenable: number }>;
}

async function rotate(keys: { current: Buffer; previous?: Buffer }): Promise<{ code: number; out: RotateReport }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    LOG_LEVEL: 'silent',
    SECRETS_KEY: keys.current.toString('base64'),
  };
  if (keys.previous) env.SECRETS_KEY_PREVIOUS = keys.previous.toString('base64');
  else delete env.SECRETS_KEY_PREVIOUS;
  try {
    const { stdout } = await run('npm', ['run', '-s', 'admin', '--', 'rotate-secrets', '--json'], { cwd: ROOT, env });
    return { code: 0, out: JSON.parse(stdout) };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, out: JSON.parse(failed.stdout) };
  }
}

const counts = (out: RotateReport) => Object.fromEntries(out.columns.map((c) => [`${c.table}.${c.column}`, [c.resealed, c.unopenable]]));

it('re-seals every sealed value under the new key, opening the old ones with SECRETS_KEY_PREVIOUS', async () => {
  const ws = await stack.workspace();
  const created = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url: 'https://hooks.example.com/r', events: ['*'] } });
  const rotated = await stack.api.post(`/v1/webhooks/${created.body.id}/rotate-secret`, { headers: ws.auth });
  expect(rotated.status).toBe(200);
  // A TOTP secret and an unsent mail, sealed by this (development-keyed) service as the other parts do.
  const dev = sealerOf(stack.config);
  await sql`insert into users (id, email, password_hash, two_factor_secret) values ('usr_rot', 'rot@example.com', 'x', ${dev.seal('JBSWY3DPEHPK3PXP')})`.execute(
    stack.runtime.db,
  );
  // Due tomorrow: the stack's mail sender (the dev outbox, outside production) leaves it unsent meanwhile.
  await sql`insert into mail_outbox (id, recipient, template, subject, body_sealed, next_attempt_at) values ('mail_rot', 'rot@example.com', 'verify', 'Verify', ${dev.seal('{"text":"hello"}')}, now() + interval '1 day')`.execute(
    stack.runtime.db,
  );

  const stored = async () => ({
    hook: await stack.runtime.db
      .selectFrom('webhooks')
      .select(['secret', 'previous_secret'])
      .where('id', '=', created.body.id)
      .executeTakeFirstOrThrow(),
    totp: (await sql<{ v: string }>`select two_factor_secret as v from users where id = 'usr_rot'`.execute(stack.runtime.db)).rows[0].v,
    mail: (await sql<{ v: string }>`select body_sealed as v from mail_outbox where id = 'mail_rot'`.execute(stack.runtime.db)).rows[0].v,
  });
  const expectUnder = async (sealer: ReturnType<typeof sealerOf>) => {
    const now = await stored();
    for (const value of [now.hook.secret, now.hook.previous_secret!, now.totp, now.mail]) expect(sealer.isCurrent(value)).toBe(true);
    expect(sealer.open(now.hook.secret)).toBe(rotated.body.secret);
    expect(sealer.open(now.hook.previous_secret!)).toBe(created.body.secret);
    expect(sealer.open(now.totp)).toBe('JBSWY3DPEHPK3PXP');
    expect(sealer.open(now.mail)).toBe('{"text":"hello"}');
  };

  // From the development key to a first real key: the development key still opens (no PREVIOUS needed).
  const first = await rotate({ current: keyOne });
  expect(first.code).toBe(0);
  expect(counts(first.out)).toMatchObject({
    'webhooks.secret': [1, 0],
    'webhooks.previous_secret': [1, 0],
    'users.two_factor_secret': [1, 0],
    'mail_outbox.body_sealed': [1, 0],
  });
  await expectUnder(sealerOf({ secretsKey: keyOne, secretsKeyPrevious: null }));

  // Then to a second key, with the first as SECRETS_KEY_PREVIOUS; a second run finds nothing to do.
  const second = await rotate({ current: keyTwo, previous: keyOne });
  expect([second.code, second.out.unopenable]).toEqual([0, 0]);
  expect(counts(second.out)['webhooks.secret']).toEqual([1, 0]);
  await expectUnder(sealerOf({ secretsKey: keyTwo, secretsKeyPrevious: null }));
  const again = await rotate({ current: keyTwo, previous: keyOne });
  // Every sealed column (webhooks' two, TOTP secrets, mail bodies, destinations' keys): nothing left.
  expect(Object.keys(counts(again.out))).toContain('destinations.secret_access_key');
  expect(Object.values(counts(again.out))).toEqual([
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ]);

  // A new key without the one that sealed the values: they are reported and left untouched.
  const before = await stored();
  const lost = await rotate({ current: randomBytes(32) });
  expect(lost.code).toBe(1);
  expect(counts(lost.out)).toMatchObject({
    'webhooks.secret': [0, 1],
    'users.two_factor_secret': [0, 1],
    'mail_outbox.body_sealed': [0, 1],
  });
  expect(await stored()).toEqual(before);
  await sql`delete from mail_outbox where id = 'mail_rot'`.execute(stack.runtime.db);
});
