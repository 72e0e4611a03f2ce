import type { Request, Response } from 'express';
import { SESSION_COOKIE, SESSION_MAX_MS } from '@sdx/domain';

/** The value of one cookie of the request, or null. */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    try {
      return decodeURIComponent(raw) || null;
    } catch {
      return null;
    }
  }
  return null;
}

export function sessionToken(req: Request): string | null {
  return readCookie(req, SESSION_COOKIE);
}

/** HttpOnly, SameSite=Lax, Path=/, Secure in production; the browser keeps it for the session's 30 days at most. */
export function setSessionCookie(res: Response, token: string, production: boolean): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', path: '/', secure: production, maxAge: SESSION_MAX_MS });
}

export function clearSessionCookie(res: Response, production: boolean): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/', secure: production });
}
