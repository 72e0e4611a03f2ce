import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import express, { type RequestHandler, Router } from 'express';
import { ApiError } from '@sdx/domain/api';

/**
 * The web console (apps/console) at /console: its built files, and index.html for every other
 * path below /console so the single-page app routes them itself. Hashed assets are cached for a
 * year; index.html is revalidated on every load, so a new build is picked up at once. Every
 * answer carries a Content-Security-Policy that lets the page load only its own scripts, styles
 * and API, and be framed by nobody.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The nearest apps/console/dist with an index.html above `from`: the repository's, whether the
 * API runs from apps/api/src (tsx, tests) or from the bundle in dist/ (production image, which
 * copies the build to apps/console/dist beside it).
 */
export function findConsoleBuild(from: string = __dirname): string | null {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'apps', 'console', 'dist');
    if (existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * The CSP of a build's pages: CONSOLE_CSP, its script-src also naming the SHA-256 of each inline
 * script of index.html (the boot script that takes a link's token out of the address bar before
 * anything loads, apps/console/tools/boot.ts). No other inline script runs.
 */
export function consoleCspFor(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1], 'utf8').digest('base64')}'`,
  );
  return hashes.length === 0 ? CONSOLE_CSP : CONSOLE_CSP.replace("script-src 'self'", `script-src 'self' ${hashes.join(' ')}`);
}

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
  });
  next();
};

/** GET (and HEAD) /console and below. `locate` is asked until it finds a build, so one made after start is served. */
export function consoleRoutes(locate: () => string | null = findConsoleBuild): Router {
  const router = Router();
  let found: string | null = null;
  let assets: RequestHandler | null = null;
  const build = (): string => {
    found ??= locate();
    if (!found)
      throw new ApiError('service_unavailable', 'The console is not built yet: `npm start` and `npm run build` build it (apps/console).');
    assets ??= express.static(path.join(found, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '365d',
      fallthrough: true,
      redirect: false,
    });
    return found;
  };
  router.use('/console', securityHeaders);
  router.use('/console/assets', (req, res, next) => {
    build();
    assets!(req, res, next);
  });
  router.use('/console/assets', (req) => {
    throw new ApiError('not_found', `No console file ${req.originalUrl.split('?')[0]}.`);
  });
  router.get(['/console', '/console/{*rest}'], async (_req, res) => {
    // Read on each load (a few hundred bytes), so a new build is served, with its script's hash, at once.
    const html = await readFile(path.join(build(), 'index.html'), 'utf8');
    res.set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': consoleCspFor(html), 'Content-Type': 'text/html; charset=utf-8' });
    res.send(html);
  });
  router.get('/', (_req, res) => res.redirect(302, '/console/'));
  return router;
}
