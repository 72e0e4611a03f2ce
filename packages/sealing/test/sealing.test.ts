import { randomBytes } from 'node:crypto';
import { SEALED_PREFIX, sealerOf } from '../src';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

describe('sealerOf', () => {
  it('seals with AES-256-GCM under the current key, a fresh nonce each time, and opens what it sealed', () => {
    const sealer = sealerOf({ secretsKey: keyA, secretsKeyPrevious: null });
    const one = sealer.seal('whsec_abc');
    const two = sealer.seal('whsec_abc');
    expect(one.startsWith(SEALED_PREFIX)).toBe(true);
    expect(one).not.toEqual(two);
    expect(one).not.toContain('whsec_');
    expect(sealer.open(one)).toBe('whsec_abc');
    expect(sealer.isSealed(one)).toBe(true);
    expect(sealer.isSealed('whsec_abc')).toBe(false);
    expect(sealer.isCurrent(one)).toBe(true);
    expect(() => sealer.open('whsec_abc')).toThrow(/not a sealed value/);
  });

  it('opens values of SECRETS_KEY_PREVIOUS during a rotation, which are not current; without that key they do not open', () => {
    const old = sealerOf({ secretsKey: keyA, secretsKeyPrevious: null }).seal('s3cret');
    const rotating = sealerOf({ secretsKey: keyB, secretsKeyPrevious: keyA });
    expect(rotating.open(old)).toBe('s3cret');
    expect(rotating.isCurrent(old)).toBe(false);
    expect(rotating.isCurrent(rotating.seal('s3cret'))).toBe(true);
    expect(() => sealerOf({ secretsKey: keyB, secretsKeyPrevious: null }).open(old)).toThrow(/no key of this process opens/);
  });

  it('refuses a value whose ciphertext or key id was tampered with', () => {
    const sealer = sealerOf({ secretsKey: keyA, secretsKeyPrevious: keyB });
    const sealed = sealer.seal('s3cret');
    const last = sealed.at(-2) === 'A' ? 'B' : 'A';
    expect(() => sealer.open(`${sealed.slice(0, -2)}${last}${sealed.slice(-1)}`)).toThrow();
    // The key id is authenticated: the same payload under the other key's id does not open.
    const otherId = sealerOf({ secretsKey: keyB, secretsKeyPrevious: null }).seal('x').split(':')[2];
    const [, , , payload] = sealed.split(':');
    expect(() => sealer.open(`${SEALED_PREFIX}${otherId}:${payload}`)).toThrow();
  });

  it('falls back to the development key without SECRETS_KEY, and still opens those values once a key is set', () => {
    const dev = sealerOf({ secretsKey: null, secretsKeyPrevious: null }).seal('dev');
    expect(sealerOf({ secretsKey: keyA, secretsKeyPrevious: null }).open(dev)).toBe('dev');
  });
});
