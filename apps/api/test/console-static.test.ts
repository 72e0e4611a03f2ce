import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { createHash } from 'node:crypto';
import { consoleCspFor, consoleRoutes, CONSOLE_CSP } from '../src/middleware/console';
import { renderErrors } from '../src/middleware/errors';
import { createLogger, loadConfig } from '@sdx/config';

/** The console's files as the API serves them at /console: caching, CSP, the single-page fallback. */
function appServing(locate: () => string | null) {
  const app = express();
  app.use(consoleRoutes(locate));
  app.use(renderErrors(createLogger(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' }), { name: 'test' })));
  return app;
}

function fakeBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'console-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(dir, 'assets', 'app-ABC123.js'), 'console.log(1)');
  return dir;
}

describe('GET /console', () => {
  const dir = fakeBuild();
  const app = appServing(() => dir);

  it('answers index.html for the console and any page below it, revalidated on every load, with the CSP', async () => {
    for (const url of ['/console', '/console/', '/console/jobs/job_123', '/console/invitations/accept?token=x']) {
      const res = await request(app).get(url);
      expect([url, res.status, res.headers['content-type']]).toEqual([url, 200, expect.stringMatching(/^text\/html/)]);
      expect(res.text).toContain('<div id="root">');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
  });

  it('serves hashed assets as immutable for a year, and a missing one as a JSON 404, never the page', async () => {
    const asset = await request(app).get('/console/assets/app-ABC123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await request(app).get('/console/assets/app-GONE.js');
    expect(missing.status).toBe(404);
    expect(missing.body.detail.error).toBe('not_found');
  });

  it('sends / to the console', async () => {
    const res = await request(app).get('/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/console/');
  });
});

describe('the page with its inline boot script', () => {
  it("names the script's SHA-256 in script-src, so that script alone runs inline", async () => {
    const dir = fakeBuild();
    const script = 'history.replaceState(null,"",location.pathname)';
    writeFileSync(path.join(dir, 'index.html'), `<!doctype html><head><script>${script}</script></head><div id="root"></div>`);
    const res = await request(appServing(() => dir)).get('/console/verify?token=abc');
    const hash = createHash('sha256').update(script).digest('base64');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP.replace("script-src 'self'", `script-src 'self' 'sha256-${hash}'`));
    expect(consoleCspFor('<p>no script</p>')).toBe(CONSOLE_CSP);
    // An asset is not a page: the plain policy.
    expect((await request(appServing(() => dir)).get('/console/assets/app-ABC123.js')).headers['content-security-policy']).toBe(
      CONSOLE_CSP,
    );
  });
});

describe('GET /console without a build', () => {
  it('answers 503 in JSON saying how to build it, and serves the build once it appears', async () => {
    let dir: string | null = null;
    const app = appServing(() => dir);
    const before = await request(app).get('/console/');
    expect(before.status).toBe(503);
    expect(before.body.detail).toMatchObject({ error: 'service_unavailable', message: expect.stringContaining('npm start') });
    dir = fakeBuild();
    const after = await request(app).get('/console/');
    expect(after.status).toBe(200);
  });
});
