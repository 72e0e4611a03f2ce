import { generateSync, stringToBytes } from 'otplib';
import {
  asRecoveryCode,
  asTotpCode,
  matchTotp,
  newRecoveryCode,
  newTotpSecret,
  otpauthUrl,
  recoveryCodeHash,
  timeStepAt,
  totpAt,
} from '@sdx/domain/testing';

/** The codes of two-factor sign-in (accounts/two-factor-codes.ts): RFC 6238 and the recovery codes. */

// RFC 6238 Appendix B, SHA-1 rows: the seed is the ASCII "12345678901234567890" (20 bytes).
const RFC_SEED = '12345678901234567890';
const RFC_SEED_BASE32 = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: Array<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('RFC 6238 Appendix B test vectors (SHA-1)', () => {
  it.each(RFC_VECTORS)('otplib with 8 digits at T=%i gives %s', (seconds, expected) => {
    expect(generateSync({ secret: stringToBytes(RFC_SEED), epoch: seconds, digits: 8, algorithm: 'sha1', period: 30 })).toBe(expected);
  });

  it.each(RFC_VECTORS)('our 6-digit code at T=%i is the last six digits of %s', (seconds, expected) => {
    const at = new Date(seconds * 1000);
    expect(totpAt(RFC_SEED_BASE32, at)).toBe(expected.slice(2));
    expect(matchTotp(RFC_SEED_BASE32, expected.slice(2), at, null)).toBe(Math.floor(seconds / 30));
  });
});

describe('matchTotp', () => {
  const secret = newTotpSecret();
  // The middle of a step, so ±30 s lands in the neighbouring steps and never on a boundary.
  const now = new Date((timeStepAt(new Date('2026-11-27T10:00:00Z')) * 30 + 15) * 1000);
  const step = timeStepAt(now);
  const codeAt = (steps: number) => totpAt(secret, new Date(now.getTime() + steps * 30_000));

  it('accepts the current step and one step either side, and says which step matched', () => {
    expect(matchTotp(secret, codeAt(0), now, null)).toBe(step);
    expect(matchTotp(secret, codeAt(-1), now, null)).toBe(step - 1);
    expect(matchTotp(secret, codeAt(1), now, null)).toBe(step + 1);
  });

  it('refuses codes two steps away', () => {
    // A code of a far step could equal a near one by chance (1 in 10^6); skip that case.
    for (const far of [-2, 2, -3, 3]) {
      const code = codeAt(far);
      if ([-1, 0, 1].some((near) => codeAt(near) === code)) continue;
      expect(matchTotp(secret, code, now, null)).toBeNull();
    }
  });

  it('refuses a step at or before the last one accepted (a code counts once)', () => {
    expect(matchTotp(secret, codeAt(0), now, step)).toBeNull();
    expect(matchTotp(secret, codeAt(-1), now, step - 1)).toBeNull();
    expect(matchTotp(secret, codeAt(1), now, step)).toBe(step + 1);
    // A last step beyond the window (a clock set back) refuses everything, without throwing.
    expect(matchTotp(secret, codeAt(0), now, step + 5)).toBeNull();
  });

  it('refuses a wrong code', () => {
    const wrong = String((Number(codeAt(0)) + 1) % 1_000_000).padStart(6, '0');
    expect([-1, 0, 1].map(codeAt)).not.toContain(wrong);
    expect(matchTotp(secret, wrong, now, null)).toBeNull();
  });
});

describe('secrets and inputs', () => {
  it('makes 20-byte base32 secrets and an otpauth URL with the issuer and the label', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    const url = otpauthUrl(secret, 'ada@example.com');
    expect(url.startsWith('otpauth://totp/Social%20Data:ada%40example.com?')).toBe(true);
    const query = new URLSearchParams(url.slice(url.indexOf('?') + 1));
    expect(query.get('secret')).toBe(secret);
    expect(query.get('issuer')).toBe('Social Data');
  });

  it('reads six digits, spaces aside, as an authenticator code', () => {
    expect(asTotpCode('123456')).toBe('123456');
    expect(asTotpCode(' 123 456 ')).toBe('123456');
    expect(asTotpCode('12345')).toBeNull();
    expect(asTotpCode('1234567')).toBeNull();
    expect(asTotpCode('12345a')).toBeNull();
  });

  it('makes recovery codes of three groups of four, read back whatever the case, spaces and look-alikes', () => {
    const codes = new Set(Array.from({ length: 200 }, newRecoveryCode));
    expect(codes.size).toBe(200);
    for (const code of codes) {
      expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
      expect(asRecoveryCode(code)).toBe(code);
      expect(asRecoveryCode(code.toUpperCase().replace(/-/g, ' '))).toBe(code);
    }
    expect(asRecoveryCode('7kq2-9xv4-mm3p')).toBe('7kq2-9xv4-mm3p');
    expect(asRecoveryCode('7kq2 9xv4 mm3p')).toBe('7kq2-9xv4-mm3p');
    expect(asRecoveryCode('Ok12-IL00-abcd')).toBe('0k12-1100-abcd');
    expect(asRecoveryCode('7kq2-9xv4-mm3')).toBeNull();
    expect(asRecoveryCode('7kq2-9xv4-mm3u')).toBeNull();
    expect(asRecoveryCode('123456')).toBeNull();
  });

  it('hashes a recovery code with its user, so one code hashes differently for two users', () => {
    expect(recoveryCodeHash('usr_a', '7kq2-9xv4-mm3p')).toMatch(/^[0-9a-f]{64}$/);
    expect(recoveryCodeHash('usr_a', '7kq2-9xv4-mm3p')).toBe(recoveryCodeHash('usr_a', '7kq2-9xv4-mm3p'));
    expect(recoveryCodeHash('usr_a', '7kq2-9xv4-mm3p')).not.toBe(recoveryCodeHash('usr_b', '7kq2-9xv4-mm3p'));
  });
});
