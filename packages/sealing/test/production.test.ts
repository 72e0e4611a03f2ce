import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { DEVELOPMENT_KEY_ID, DevelopmentKeyRefused, isDevelopmentKey, SEALED_PREFIX, sealerOf } from '../src';

/**
 * The public development key in production (extensions-3.md 1): values sealed under it are
 * refused when opened, and the key itself is refused as SECRETS_KEY or SECRETS_KEY_PREVIOUS
 * when a process starts. Outside production it keeps working as before.
 */
const ROOT = path.resolve(__dirname, '../../..');
// Anyone can derive it from the source: that is the point.
const developmentKey = createHash('sha256').update('sdx development secrets key: not for production').digest();
const key = randomBytes(32);

describe('the development key in production', () => {
  it('is the key values sealed without SECRETS_KEY name', () => {
    expect(isDevelopmentKey(developmentKey)).toBe(true);
    expect(isDevelopmentKey(key)).toBe(false);
    const dev = sealerOf({ secretsKey: null, secretsKeyPrevious: null }).seal('x');
    expect(dev.startsWith(`${SEALED_PREFIX}${DEVELOPMENT_KEY_ID}:`)).toBe(true);
  });

  it('a value sealed under it (by anyone with the source) is refused on unseal in production, though it opens outside production', () => {
    const forged = sealerOf({ secretsKey: developmentKey, secretsKeyPrevious: null }).seal('whsec_attacker');
    const production = sealerOf({ secretsKey: key, secretsKeyPrevious: null, nodeEnv: 'production' });
    expect(() => production.open(forged)).toThrow(DevelopmentKeyRefused);
    expect(() => production.open(forged)).toThrow(/development key is refused in production/);
    // Its own values open; so do a rotation's previous key's.
    expect(production.open(production.seal('mine'))).toBe('mine');
    const previous = randomBytes(32);
    const old = sealerOf({ secretsKey: previous, secretsKeyPrevious: null }).seal('old');
    expect(sealerOf({ secretsKey: key, secretsKeyPrevious: previous, nodeEnv: 'production' }).open(old)).toBe('old');
    // Outside production a database sealed before SECRETS_KEY was set keeps opening.
    expect(sealerOf({ secretsKey: key, secretsKeyPrevious: null, nodeEnv: 'development' }).open(forged)).toBe('whsec_attacker');
  });

  it('is refused as SECRETS_KEY or SECRETS_KEY_PREVIOUS in production, and a missing key too', () => {
    expect(() => sealerOf({ secretsKey: developmentKey, secretsKeyPrevious: null, nodeEnv: 'production' })).toThrow(
      /SECRETS_KEY is the public development key/,
    );
    expect(() => sealerOf({ secretsKey: key, secretsKeyPrevious: developmentKey, nodeEnv: 'production' })).toThrow(
      /SECRETS_KEY_PREVIOUS is the public development key/,
    );
    expect(() => sealerOf({ secretsKey: null, secretsKeyPrevious: null, nodeEnv: 'production' })).toThrow(/SECRETS_KEY is required/);
  });

  it.each([
    ['SECRETS_KEY', { SECRETS_KEY: developmentKey.toString('base64') }],
    ['SECRETS_KEY_PREVIOUS', { SECRETS_KEY: key.toString('base64'), SECRETS_KEY_PREVIOUS: developmentKey.toString('base64') }],
  ])(
    'keeps the API from starting in production with the development key as %s, before it reaches anything',
    (name, keys) => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_ENV: 'production',
        PROVIDER_MODE: 'sandbox',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
        REDIS_URL: 'redis://127.0.0.1:1/0',
        LOG_LEVEL: 'silent',
        ...keys,
      };
      if (!('SECRETS_KEY_PREVIOUS' in keys)) delete env.SECRETS_KEY_PREVIOUS;
      const started = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'apps/api/src/main.ts')], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(started.status).toBe(1);
      expect(started.stderr).toContain(`${name} is the public development key`);
    },
    60_000,
  );
});
