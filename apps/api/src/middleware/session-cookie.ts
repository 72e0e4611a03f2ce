import type { Request, Response } from 'express';
import { SESSION_COOKIE, SESSION_MAX_MS } from '@sdx/domain/api';

/**
 * The session cookie's name: in production `__Host-sdx_session`. The `__Host-` prefix makes the
 * browser accept the cookie only with Secure, Path=/ and no Domain, from a secure origin: a
 * sibling subdomain or a plain-HTTP page cannot plant or shadow a session (fixation). Elsewhere
 * (local HTTP, tests) `sdx_session`, which a browser keeps over plain HTTP.
 */
export function sessionCookieName(production: boolean): string {
  return production ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** The value of one cookie of the request, or null. */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    try {
      return decodeURIComponent(raw) || null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The session token of the request: only the cookie of the environment's name is read, so in
 * production an unprefixed `sdx_session` (which anyone who can set a cookie on the domain could
 * plant) is ignored.
 */
export function sessionToken(req: Request, production: boolean): string | null {
  return readCookie(req, sessionCookieName(production));
}

/** HttpOnly, SameSite=Lax, Path=/, no Domain, Secure in production; the browser keeps it for the session's 30 days at most. */
export function setSessionCookie(res: Response, token: string, production: boolean): void {
  res.cookie(sessionCookieName(production), token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: production,
    maxAge: SESSION_MAX_MS,
  });
}

export function clearSessionCookie(res: Response, production: boolean): void {
  res.clearCookie(sessionCookieName(production), { httpOnly: true, sameSite: 'lax', path: '/', secure: production });
}
