import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type RequestHandler, Router } from 'express';
import { ApiError } from '@sdx/domain';

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
    if (!found) throw new ApiError('service_unavailable', 'The console is not built yet: `npm start` and `npm run build` build it (apps/console).');
    assets ??= express.static(path.join(found, 'assets'), { index: false, immutable: true, maxAge: '365d', fallthrough: true, redirect: false });
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
  router.get(['/console', '/console/{*rest}'], (_req, res) => {
    const dir = build();
    res.set('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
  router.get('/', (_req, res) => res.redirect(302, '/console/'));
  return router;
}
