import { Writable } from 'node:stream';
import { createLogger, loadConfig } from '@sdx/config';
import { createProviderRegistry, SANDBOX_PROVIDER_NAME } from '@sdx/providers';
import { chooseProviders } from '@sdx/runtime';
import { TEST_SECRETS_KEY } from '@sdx/testing';

/** What the api, worker and scheduler processes serve, chosen as at their start. */
function choose(env: NodeJS.ProcessEnv) {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  const config = loadConfig({ SECRETS_KEY: TEST_SECRETS_KEY, ...env }, false);
  const providers = chooseProviders(config, createLogger({ logLevel: 'info' }, {}, sink), env);
  const registry = createProviderRegistry(providers);
  return { providers, registry, warnings: lines.filter((line) => line.level === 40).map((line) => line.msg) };
}

describe('provider mode in production', () => {
  it('never serves the sandbox by default: no credentials and no PROVIDER_MODE enables nothing', () => {
    const { providers, registry, warnings } = choose({ NODE_ENV: 'production' });
    expect(providers.map((p) => p.name)).not.toContain(SANDBOX_PROVIDER_NAME);
    expect(registry.platforms()).toEqual([]);
    expect(warnings.some((w) => w.includes('SANDBOX IN PRODUCTION'))).toBe(false);
    expect(warnings).toContain('youtube is live but no youtube credentials are set: its operations are unavailable');
  });

  it('serves the sandbox when PROVIDER_MODE=sandbox is set, and says so loudly', () => {
    const { providers, registry, warnings } = choose({ NODE_ENV: 'production', PROVIDER_MODE: 'sandbox' });
    expect(providers.map((p) => p.name)).toEqual([SANDBOX_PROVIDER_NAME]);
    expect(registry.isEnabled('instagram', 'profile')).toBe(true);
    expect(warnings.filter((w) => w.startsWith('SANDBOX IN PRODUCTION'))).toHaveLength(1);
  });

  it('names the platforms a per-platform mode leaves on the sandbox', () => {
    const { warnings } = choose({ NODE_ENV: 'production', PROVIDER_MODE: 'youtube=live', YOUTUBE_API_KEY: 'yt-key' });
    const loud = warnings.find((w) => w.startsWith('SANDBOX IN PRODUCTION'));
    expect(loud).toBeDefined();
    expect(loud).toContain('instagram');
    expect(loud).not.toContain('youtube');
  });

  it('keeps the development default: the sandbox without credentials, and no warning', () => {
    const { providers, warnings } = choose({ NODE_ENV: 'development' });
    expect(providers.map((p) => p.name)).toEqual([SANDBOX_PROVIDER_NAME]);
    expect(warnings).toEqual([]);
  });
});
