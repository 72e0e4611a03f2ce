import type { RequestHandler, Response } from 'express';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { CONSENT_PAGE } from '../oauth/provider';
import { oauthKit } from '../oauth/kit';
import { route } from './route';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page of a bad authorization request: what the application sent wrong, for the user who followed it. Nothing it loads, nothing it runs. */
export function authorizationErrorPage(res: Response, error: string, description: string): void {
  const title = 'This sign-in request cannot be completed';
  res
    .status(400)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    })
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>\n` +
        `<body><main><h1>${title}</h1><p>The application that sent you here made a request this service cannot accept (<code>${escapeHtml(error)}</code>): ${escapeHtml(description)}</p>` +
        '<p>Nothing was shared with it. Close this page and tell the application’s makers, or try connecting it again.</p></main></body></html>\n',
    );
}

/**
 * The SDK's handler sends the faults it finds once the client and redirect URI are known
 * (response_type, PKCE, state, scope, resource) back to the redirect URI. Any client may register
 * any https URI, so that would make our domain an open redirect: this answers them with a 400
 * page instead (extensions-3.md 1). The one redirect let through is the consent page's.
 */
const faultsAsPage: RequestHandler = (_req, res, next) => {
  const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
  res.redirect = (...args: [number, string] | [string]) => {
    const [status, url] = args.length === 2 ? args : [302, args[0]];
    if (url.startsWith(`${CONSENT_PAGE}?`)) {
      redirect(status, url);
      return;
    }
    let error = 'invalid_request';
    let description = 'The request is malformed.';
    try {
      const params = new URL(url).searchParams;
      error = params.get('error') ?? error;
      description = params.get('error_description') ?? description;
    } catch {
      // Not a URL: the generic words above.
    }
    authorizationErrorPage(res, error, description);
  };
  next();
};

/**
 * GET /oauth/authorize — 302 to the console's consent page. An unknown client or a redirect URI
 * it did not register is answered 400 (JSON) here; any other fault (no PKCE S256 challenge,
 * response_type not `code`, ...) is a 400 HTML page (`faultsAsPage`). Never a redirect to the
 * client.
 */
export const authorizeOAuthClient = route('authorizeOAuthClient', {
  access: 'public',
  protocol: 'oauth',
  handlers: (deps) => {
    const kit = oauthKit(deps);
    return [kit.limiter.guard('authorize'), faultsAsPage, authorizationHandler({ provider: kit.provider, rateLimit: false })];
  },
});
