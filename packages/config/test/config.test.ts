import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, loadConfig, logFormatFor, nodeHeapArgs, resolveProviderMode, sandboxWarning } from '../src';

function sink(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('log format', () => {
  it('is pretty on a terminal outside production and JSON everywhere else', () => {
    expect(logFormatFor({}, true)).toBe('pretty');
    expect(logFormatFor({ NODE_ENV: 'development' }, true)).toBe('pretty');
    expect(logFormatFor({ NODE_ENV: 'production' }, true)).toBe('json');
    expect(logFormatFor({}, false)).toBe('json');
    expect(logFormatFor({ NODE_ENV: 'production' }, false)).toBe('json');
  });

  it('follows LOG_FORMAT when set, and refuses an unknown one', () => {
    expect(logFormatFor({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' }, false)).toBe('pretty');
    expect(logFormatFor({ LOG_FORMAT: 'JSON' }, true)).toBe('json');
    expect(() => logFormatFor({ LOG_FORMAT: 'xml' }, true)).toThrow(/LOG_FORMAT/);
    expect(loadConfig({ NODE_ENV: 'development' }, true).logFormat).toBe('pretty');
    expect(loadConfig({ NODE_ENV: 'development' }, false).logFormat).toBe('json');
  });

  it('writes one JSON object per line in json, with secrets redacted', () => {
    const out = sink();
    const log = createLogger({ logLevel: 'info', logFormat: 'json' }, {}, out.stream);
    log.info({ apiKey: 'sdx_live_json_secret', job: { token: 'tok_json_secret' } }, 'hello');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'hello', level: 30, apiKey: '[Redacted]', job: { token: '[Redacted]' } });
    expect(out.text()).not.toContain('secret');
  });

  it('writes readable lines in pretty, with secrets redacted before formatting', () => {
    const out = sink();
    const log = createLogger({ logLevel: 'info', logFormat: 'pretty' }, { name: 'api' }, out.stream);
    log.info({ apiKey: 'sdx_live_pretty_secret', jobId: 'job_1' }, 'job admitted');
    const text = out.text();
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toMatch(/INFO.*\(api\): job admitted/);
    expect(text).toContain('jobId: "job_1"');
    expect(text).toContain('[Redacted]');
    expect(text).not.toContain('pretty_secret');
  });

  it('writes JSON to a given destination unless told otherwise', () => {
    const out = sink();
    createLogger({ logLevel: 'info' }, {}, out.stream).info('plain');
    expect(JSON.parse(out.text())).toMatchObject({ msg: 'plain' });
  });
});

describe('provider mode', () => {
  it('leaves the choice to the selection outside production, and means live in production', () => {
    expect(resolveProviderMode('development', undefined)).toBeUndefined();
    expect(resolveProviderMode('test', '  ')).toBeUndefined();
    expect(resolveProviderMode('production', undefined)).toBe('live');
    expect(resolveProviderMode('production', '')).toBe('live');
    expect(resolveProviderMode('production', 'sandbox')).toBe('sandbox');
    expect(resolveProviderMode('production', 'youtube=live')).toBe('youtube=live');
  });

  it('warns loudly in production for each platform the sandbox serves, and only there', () => {
    const warning = sandboxWarning('production', { youtube: 'live', twitter: 'sandbox', tiktok: 'sandbox', facebook: 'off' });
    expect(warning).toMatch(/^SANDBOX IN PRODUCTION/);
    expect(warning).toContain('twitter, tiktok');
    expect(warning).not.toContain('youtube');
    expect(sandboxWarning('production', { youtube: 'live', twitter: 'off' })).toBeUndefined();
    expect(sandboxWarning('development', { youtube: 'sandbox' })).toBeUndefined();
  });
});

describe('operations settings', () => {
  it('reads METRICS_PORT and ADMIN_TOKEN, both off when unset', () => {
    const unset = loadConfig({});
    expect(unset.metricsPort).toBeUndefined();
    expect(unset.adminToken).toBeUndefined();
    const set = loadConfig({ METRICS_PORT: '9464', ADMIN_TOKEN: '  an-admin-token-of-32-characters  ' });
    expect(set.metricsPort).toBe(9464);
    expect(set.adminToken).toBe('an-admin-token-of-32-characters');
  });

  it('refuses a malformed METRICS_PORT and a short ADMIN_TOKEN', () => {
    expect(() => loadConfig({ METRICS_PORT: 'abc' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_PORT: '0' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ ADMIN_TOKEN: 'short' })).toThrow(/ADMIN_TOKEN/);
  });
});

describe('retention', () => {
  it('keeps results 30 days and purges hourly by default', () => {
    const config = loadConfig({}, false);
    expect(config.resultRetentionDays).toBe(30);
    expect(config.retentionIntervalMs).toBe(3_600_000);
  });

  it('reads RESULT_RETENTION_DAYS (at least 1) and RETENTION_INTERVAL_MS, or the interval under its former name', () => {
    expect(loadConfig({ RESULT_RETENTION_DAYS: '7' }, false).resultRetentionDays).toBe(7);
    expect(() => loadConfig({ RESULT_RETENTION_DAYS: '0' }, false)).toThrow(/RESULT_RETENTION_DAYS must be an integer >= 1/);
    expect(loadConfig({ RETENTION_INTERVAL_MS: '60000' }, false).retentionIntervalMs).toBe(60_000);
    expect(loadConfig({ IDEMPOTENCY_PURGE_INTERVAL_MS: '0' }, false).retentionIntervalMs).toBe(0);
    expect(loadConfig({ RETENTION_INTERVAL_MS: '5000', IDEMPOTENCY_PURGE_INTERVAL_MS: '0' }, false).retentionIntervalMs).toBe(5_000);
  });
});

describe('heavy reads and the heap bound', () => {
  it('gives heavy reads one connection of their own and each process a 1,024 MB heap by default', () => {
    const config = loadConfig({}, false);
    expect(config.heavyReadConnections).toBe(1);
    expect(config.maxHeapMb).toBe(1024);
    expect(nodeHeapArgs(config)).toEqual(['--max-old-space-size=1024']);
  });

  it("grows the API's heap by 100 % of what a full collection kept before marking again, unless HEAP_GROWTH_PERCENT says otherwise", () => {
    expect(loadConfig({}, false).heapGrowthPercent).toBe(100);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }, false).heapGrowthPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '250' }, false).heapGrowthPercent).toBe(250);
    expect(() => loadConfig({ HEAP_GROWTH_PERCENT: '-1' }, false)).toThrow(/HEAP_GROWTH_PERCENT must be an integer >= 0/);
  });

  it('sets the heap growth in a running process with a flag V8 knows', () => {
    // V8 answers a flag it does not know (a future V8 that dropped it) with an error on stderr.
    const script =
      "const { applyHeapGrowth, loadConfig } = require('@sdx/config'); applyHeapGrowth(loadConfig({ HEAP_GROWTH_PERCENT: '100' }, false)); console.log('applied');";
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: path.resolve(__dirname, '../../..'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).not.toMatch(/unrecognized flag/);
    expect(run.stdout.trim()).toBe('applied');
    expect(run.status).toBe(0);
  });

  it('reads HEAVY_READ_CONNECTIONS (at least 1) and MAX_HEAP_MB (at least 64)', () => {
    expect(loadConfig({ HEAVY_READ_CONNECTIONS: '3' }, false).heavyReadConnections).toBe(3);
    expect(() => loadConfig({ HEAVY_READ_CONNECTIONS: '0' }, false)).toThrow(/HEAVY_READ_CONNECTIONS must be an integer >= 1/);
    expect(nodeHeapArgs(loadConfig({ MAX_HEAP_MB: '384' }, false))).toEqual(['--max-old-space-size=384']);
    expect(() => loadConfig({ MAX_HEAP_MB: '32' }, false)).toThrow(/MAX_HEAP_MB must be an integer >= 64/);
  });
});
