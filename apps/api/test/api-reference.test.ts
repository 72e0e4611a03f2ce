import type { Server } from 'node:http';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { parse } from 'yaml';
import { loadOpenApiDocument } from '@sdx/contract';
import { listen, startTestStack, type TestStack } from '@sdx/testing';
import * as reference from '../src/routes/reference';

/**
 * GET /openapi.yaml, /openapi.json and /docs (extensions.md 7): the contract served as it is,
 * and a reference page that a real browser renders with every operation listed and no request
 * to any other host. The browser is Debian's Chromium (`apt-get install -y chromium`; .ci/run
 * installs it), driven by playwright-core.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let stack: TestStack;
let server: Server;
let base: string;

beforeAll(async () => {
  stack = await startTestStack();
  ({ server, url: base } = await listen(stack.app));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await stack.close();
});

const contract = loadOpenApiDocument();
const operationIds = Object.values(contract.paths).flatMap((item) =>
  Object.values(item as Record<string, { operationId?: string }>).map((op) => op.operationId!),
);

describe('the contract, served', () => {
  it('serves openapi.yaml as written and openapi.json as the same document, with no credentials', async () => {
    const yaml = await stack.api.get('/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(parse(yaml.text)).toEqual(contract);

    const json = await stack.api.get('/openapi.json');
    expect(json.status).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.body).toEqual(contract);
    expect(json.headers['ratelimit-limit']).toBeUndefined();
  });

  it('refuses a query parameter it does not declare', async () => {
    const res = await stack.api.get('/openapi.json?x=1');
    expect([res.status, res.body.detail[0].loc]).toEqual([422, ['query', 'x']]);
  });

  it('serves the docs page with a policy that allows this origin only', async () => {
    const res = await stack.api.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    const scripts = [...res.text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toEqual([expect.stringMatching(/^\/docs\/redoc\.standalone\.js\?v=[\w-]{16}$/)]);
    const script = await stack.api.get(scripts[0]);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(String(script.text ?? script.body).length).toBeGreaterThan(100_000);
  });

  it('serves the page, its script and the contract from memory: ETag, 304, cached for good when versioned, compressed once', async () => {
    const page = await stack.api.get('/docs');
    const version = /redoc\.standalone\.js\?v=([\w-]{16})/.exec(page.text)![1];
    expect(reference.docsScriptUrl()).toBe(`/docs/redoc.standalone.js?v=${version}`);
    // The same bytes as the process made once, and the same objects on every call: nothing is made again per request.
    expect(reference.docsPageAsset()).toBe(reference.docsPageAsset());
    expect(page.text).toBe(reference.docsPageAsset().body.toString('utf8'));
    for (const [path, asset, cacheControl] of [
      ['/docs', reference.docsPageAsset(), 'no-cache'],
      [`/docs/redoc.standalone.js?v=${version}`, reference.docsScriptAsset(), 'public, max-age=31536000, immutable'],
      ['/docs/redoc.standalone.js', reference.docsScriptAsset(), 'public, max-age=86400'],
      ['/docs/redoc.standalone.js?v=older', reference.docsScriptAsset(), 'public, max-age=86400'],
      ['/openapi.json', reference.contractJsonAsset(), 'no-cache'],
    ] as const) {
      const first = await stack.api.get(path, { headers: { 'Accept-Encoding': 'br' } });
      expect([path, first.status, first.headers['cache-control'], first.headers['content-encoding'], first.headers.vary]).toEqual([
        path,
        200,
        cacheControl,
        'br',
        'Accept-Encoding',
      ]);
      expect(first.headers.etag).toBe(asset.etag);
      // The compressed body sent is the one made once.
      expect(Number(first.headers['content-length'])).toBe(asset.br.length);
      const gzip = await stack.api.get(path, { headers: { 'Accept-Encoding': 'gzip' } });
      expect([gzip.headers['content-encoding'], Number(gzip.headers['content-length'])]).toEqual(['gzip', asset.gzip.length]);
      const again = await stack.api.get(path, { headers: { 'If-None-Match': String(first.headers.etag) } });
      expect([path, again.status, again.headers.etag]).toEqual([path, 304, asset.etag]);
      const stale = await stack.api.get(path, { headers: { 'If-None-Match': '"older"', 'Accept-Encoding': 'identity' } });
      expect([stale.status, stale.headers['content-encoding']]).toEqual([200, undefined]);
    }
    expect(reference.docsScriptAsset().br.length * 3).toBeLessThan(reference.docsScriptAsset().body.length);
  });
});

describe('the reference page in a browser', () => {
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('lists every operation of openapi.yaml, with no request to any other host and no policy violation', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    await page.route('**/*', async (route) => {
      const { protocol, hostname } = new URL(route.request().url());
      const local =
        protocol === 'data:' || protocol === 'blob:' || hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
      if (local) await route.continue();
      else {
        elsewhere.push(route.request().url());
        await route.abort();
      }
    });
    // The page's own record of what its Content-Security-Policy blocked (the browser code runs as text: this file is typed for Node).
    await page.addInitScript({
      content:
        "window.violations = []; document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(String(error)));

    const res = await page.goto(`${base}/docs`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    await page.waitForSelector('[data-section-id]', { timeout: 30_000 });

    const listed = await page.evaluate<string[]>(
      "[...document.querySelectorAll('[data-section-id]')].map((e) => e.getAttribute('data-section-id'))",
    );
    const missing = operationIds.filter((id) => !listed.some((section) => section.endsWith(`/operation/${id}`)));
    expect(missing).toEqual([]);
    expect(await page.title()).toContain('API reference');
    // A link back to the web console, on this origin.
    expect(
      await page.getByRole('navigation', { name: 'Service' }).getByRole('link', { name: 'Back to the console' }).getAttribute('href'),
    ).toBe('/console/');

    expect(elsewhere).toEqual([]);
    expect(await page.evaluate('window.violations')).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
