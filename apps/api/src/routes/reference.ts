import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import { loadOpenApiDocument, OPENAPI_PATH } from '@sdx/contract';
import { matchesIfNoneMatch } from './job-body';

/**
 * What the reference routes serve (GET /openapi.yaml, /openapi.json, /docs and the page's
 * script), read once per process, on first use.
 */

/** The Redoc bundle from npm (redoc's standalone build): the whole page runs from this one file. */
export const DOCS_SCRIPT_PATH = '/docs/redoc.standalone.js';

/**
 * The page's Content-Security-Policy: nothing from any other host. Redoc's styled-components
 * write <style> elements (hence 'unsafe-inline' for styles only) and its search runs in a
 * worker made from a blob: URL; the contract is fetched from this origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** openapi.yaml as written. */
export const contractYaml = once(() => readFileSync(OPENAPI_PATH, 'utf8'));

/** openapi.yaml as JSON (the same document). */
export const contractJson = once(() => JSON.stringify(loadOpenApiDocument()));

/**
 * Hosts the bundle itself would reach: the sidebar's "API docs by Redocly" credit shows Redocly's
 * logo from their CDN (the image hides itself when it fails to load). Its address is blanked, so
 * the page asks no other host for anything; the browser test fails if the bundle ever reaches out
 * some other way.
 */
const REMOTE_ASSETS = ['https://cdn.redoc.ly/redoc/logo-mini.svg'];

/** Redoc's standalone bundle as npm installed it, less its remote assets. */
export const docsScript = once(() => {
  let script = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  for (const asset of REMOTE_ASSETS) script = script.split(asset).join('');
  return Buffer.from(script, 'utf8');
});

/** The reference page: a link back to the console, then Redoc renders /openapi.json into the <redoc> element on load. */
export const docsPage = once(() => {
  const { info } = loadOpenApiDocument();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)} ${escapeHtml(info.version)}: API reference</title>
</head>
<body>
<nav aria-label="Service" style="padding:0.5rem 1rem;font-family:system-ui,sans-serif;border-bottom:1px solid #ddd"><a href="/console/">Back to the console</a></nav>
<redoc spec-url="/openapi.json" required-props-first="true"></redoc>
<script src="${docsScriptUrl()}"></script>
</body>
</html>
`;
});

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A reference body as served: its bytes, gzip and br made once (at the best ratio: they are
 * made once per process, not per request), and a strong ETag of its bytes. A request whose
 * If-None-Match names the ETag is answered 304; any other is written from memory, compressed as
 * the request's Accept-Encoding takes it, without passing through the per-response compressor.
 */
export interface ReferenceAsset {
  body: Buffer;
  gzip: Buffer;
  br: Buffer;
  etag: string;
  /** The first 16 characters of the body's SHA-256 (base64url): the version a URL names. */
  version: string;
}

function referenceAsset(body: Buffer): ReferenceAsset {
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, {
      params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 9, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
    etag: `"${version}"`,
    version,
  };
}

export const docsPageAsset = once(() => referenceAsset(Buffer.from(docsPage(), 'utf8')));
export const docsScriptAsset = once(() => referenceAsset(docsScript()));
export const contractJsonAsset = once(() => referenceAsset(Buffer.from(contractJson(), 'utf8')));

/** The script's address as the page names it: versioned, so that a browser may keep it for good. */
export function docsScriptUrl(): string {
  return `${DOCS_SCRIPT_PATH}?v=${docsScriptAsset().version}`;
}

/** Makes every reference body at once (the API's start), so that no first visitor waits for it. */
export function prepareReference(): void {
  docsScriptAsset();
  docsPageAsset();
  contractJsonAsset();
}

/** Writes a reference body: 304 for its ETag, else from memory, br or gzip when accepted. */
export function sendReferenceAsset(req: Request, res: Response, asset: ReferenceAsset, type: string, cacheControl: string): void {
  res.setHeader('ETag', asset.etag);
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Vary', 'Accept-Encoding');
  if (matchesIfNoneMatch(req.get('If-None-Match'), asset.etag)) {
    res.status(304).end();
    return;
  }
  res.type(type);
  const encoding = req.acceptsEncodings('br', 'gzip', 'identity');
  const body = encoding === 'br' ? asset.br : encoding === 'gzip' ? asset.gzip : asset.body;
  if (encoding === 'br' || encoding === 'gzip') res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', String(body.length));
  res.end(body);
}
