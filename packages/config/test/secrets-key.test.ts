import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../src';

/**
 * SECRETS_KEY (extensions-2.md 2): 32 bytes in base64; required with NODE_ENV=production, so a
 * production process refuses to start without it (rather than seal secrets under the development
 * key anyone with this source can derive); SECRETS_KEY_PREVIOUS is optional (a rotation's old key).
 */
const ROOT = path.resolve(__dirname, '../../..');
const key = randomBytes(32).toString('base64');
const production = { NODE_ENV: 'production', PROVIDER_MODE: 'sandbox' };

describe('SECRETS_KEY', () => {
  it('is required in production', () => {
    expect(() => loadConfig(production, false)).toThrow(/SECRETS_KEY is required in production/);
    expect(() => loadConfig({ ...production, SECRETS_KEY: '  ' }, false)).toThrow(/SECRETS_KEY is required in production/);
    const config = loadConfig({ ...production, SECRETS_KEY: key }, false);
    expect(config.secretsKey).toEqual(Buffer.from(key, 'base64'));
    expect(config.secretsKeyPrevious).toBeNull();
  });

  it('is optional outside production (the development key seals then)', () => {
    expect(loadConfig({ NODE_ENV: 'development' }, false).secretsKey).toBeNull();
    expect(loadConfig({ NODE_ENV: 'test' }, false).secretsKey).toBeNull();
  });

  it('must be 32 bytes of base64, in production and out of it, and so must SECRETS_KEY_PREVIOUS', () => {
    for (const bad of ['not-base64!', randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'CHANGE-ME']) {
      expect(() => loadConfig({ ...production, SECRETS_KEY: bad }, false)).toThrow(/SECRETS_KEY must be 32 bytes in base64/);
      expect(() => loadConfig({ SECRETS_KEY: bad }, false)).toThrow(/SECRETS_KEY must be 32 bytes in base64/);
      expect(() => loadConfig({ ...production, SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: bad }, false)).toThrow(
        /SECRETS_KEY_PREVIOUS must be 32 bytes in base64/,
      );
    }
    const previous = randomBytes(32).toString('base64');
    expect(loadConfig({ ...production, SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: previous }, false).secretsKeyPrevious).toEqual(
      Buffer.from(previous, 'base64'),
    );
  });

  it.each([
    ['the API', 'apps/api/src/main.ts'],
    ['the migrations', 'packages/db/src/cli.ts'],
  ])('keeps %s from starting in production without it, before it reaches anything', (_name, entry) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...production,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
      REDIS_URL: 'redis://127.0.0.1:1/0',
      LOG_LEVEL: 'silent',
    };
    delete env.SECRETS_KEY;
    const started = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(started.status).toBe(1);
    expect(started.stderr).toContain('SECRETS_KEY is required in production');
  });
});
