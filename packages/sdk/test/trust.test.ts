import { createHmac } from 'node:crypto';
import { ApiError, Client } from '@sdx/sdk';
import { type ServedStack, type SmtpCatcher, startServedStack, startSmtpCatcher } from '@sdx/testing';
import { contractFetch } from './support';

/** Email verification, password reset and two-factor sign-in through the SDK, the service mailing a loopback SMTP server. */

let served: ServedStack;
let smtp: SmtpCatcher;
beforeAll(async () => {
  smtp = await startSmtpCatcher();
  served = await startServedStack({ env: { SMTP_URL: smtp.url, APP_URL: 'http://console.test', EMAIL_VERIFICATION: '1' } });
});
afterAll(async () => {
  await served.close();
  await smtp.close();
});

const client = () => new Client({ baseUrl: served.url, fetch: contractFetch() });

/** The token of the newest link of `kind` mailed to `to`, once there are more than `after` of them. */
async function mailedToken(to: string, kind: 'verify' | 'reset', after = 0): Promise<string> {
  const pattern = new RegExp(`/console/${kind}\\?token=([A-Za-z0-9_%.-]+)`);
  const matching = () => smtp.messages.filter((m) => m.to === to && pattern.test(m.text));
  await smtp.waitFor(() => matching().length > after, 10_000);
  return decodeURIComponent(pattern.exec(matching().at(-1)!.text)![1]);
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) of a base32 secret. */
function totp(secret: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secret.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const hmac = createHmac('sha1', key).update(counter).digest();
  const offset = hmac[hmac.length - 1] & 0x0f;
  return ((hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).toString().padStart(6, '0');
}

it('signs up with a mailed link, turns two-factor sign-in on, signs in with a code, resets the password and revokes keys', async () => {
  const email = `sdk.trust.${Date.now().toString(36)}@example.com`;
  const me = client();
  const signedUp = await me.auth.signUp({ email, password: 'correct horse battery' });
  expect(signedUp).toEqual({ verification_required: true });
  await mailedToken(email, 'verify');
  await me.auth.resendVerification(email);
  const resent = await mailedToken(email, 'verify', 1);
  await expect(me.auth.verifyEmail(resent, 'not the sign-up password')).rejects.toMatchObject({ status: 401, code: 'invalid_credentials' });
  const verified = await me.auth.verifyEmail(resent, 'correct horse battery');
  expect(verified.user.email).toBe(email);
  expect((await me.auth.session()).user.two_factor_enabled).toBe(false);
  await expect(me.auth.verifyEmail('no-such-token', 'correct horse battery')).rejects.toMatchObject({
    status: 410,
    code: 'verification_invalid',
  });

  const setup = await me.auth.twoFactor.setUp();
  expect(setup.otpauth_url).toContain(`secret=${setup.secret}`);
  const { recovery_codes: codes } = await me.auth.twoFactor.enable(totp(setup.secret));
  expect(codes).toHaveLength(10);
  expect((await me.auth.session()).user.two_factor_enabled).toBe(true);

  const again = client();
  const refused = await again.auth.logIn({ email, password: 'correct horse battery' }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 401, code: 'otp_required' });
  await expect(again.auth.logIn({ email, password: 'correct horse battery', otp: 'not-a-code' })).rejects.toMatchObject({
    status: 401,
    code: 'invalid_otp',
  });
  await again.auth.logIn({ email, password: 'correct horse battery', otp: codes[0] });

  const key = await again.keys.create({ name: 'before the theft' });
  await again.auth.changePassword({ current_password: 'correct horse battery', new_password: 'a brand new password', revokeApiKeys: true });
  await expect(new Client({ baseUrl: served.url, apiKey: key.api_key, fetch: contractFetch() }).account.get()).rejects.toMatchObject({
    status: 401,
  });
  // The other session ended with the change; this one goes on.
  await expect(me.auth.session()).rejects.toMatchObject({ status: 401 });

  const kept = await again.keys.create({ name: 'after the change' });
  await again.auth.requestPasswordReset(email);
  const resetToken = await mailedToken(email, 'reset');
  await again.auth.confirmPasswordReset(resetToken, 'the newest password of all', { revokeKeys: true });
  await expect(again.auth.session()).rejects.toMatchObject({ status: 401 });
  await expect(new Client({ baseUrl: served.url, apiKey: kept.api_key, fetch: contractFetch() }).account.get()).rejects.toMatchObject({
    status: 401,
  });
  await expect(again.auth.confirmPasswordReset(resetToken, 'once more with feeling')).rejects.toMatchObject({
    status: 410,
    code: 'reset_token_invalid',
  });

  await again.auth.logIn({ email, password: 'the newest password of all', otp: codes[1] });
  await again.auth.twoFactor.disable({ password: 'the newest password of all', code: codes[2] });
  expect((await again.auth.session()).user.two_factor_enabled).toBe(false);
});
