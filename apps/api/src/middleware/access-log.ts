import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { redactHeaders, redactUrl } from '@sdx/config';
import type { Tenant } from '@sdx/domain/api';

/**
 * One line per request at info level (but /healthz and /metrics; the console's static files and
 * the reference page's script at debug, without headers), written when the response is finished (or the client
 * went away first). Credential-like headers (Authorization, Proxy-Authorization, X-API-Key,
 * Cookie, any *-Token ...) and query parameters (?api_key=, ?token= ...) are redacted before the
 * line is built, so a key never reaches the log however it was sent. Nothing is computed when info is off, and no logger is made per request.
 */
/** The console's static files and the reference page's script: a page load asks for many; not worth an info line each. */
export function isStaticAsset(url: string): boolean {
  return url.startsWith('/console/assets/') || url.startsWith('/docs/redoc.standalone.js');
}

export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    // Static files: at debug, one short line (no headers); API requests at info, as below.
    const asset = isStaticAsset(req.url);
    if (req.url === '/healthz' || req.url === '/metrics' || !log.isLevelEnabled(asset ? 'debug' : 'info')) {
      next();
      return;
    }
    const started = performance.now();
    // Read now: a HEAD request is handled as GET further on (see app.ts).
    const method = req.method;
    if (asset) {
      res.once('close', () =>
        log.debug(
          {
            req: { id: res.locals.requestId as string, method, url: redactUrl(req.originalUrl) },
            res: { statusCode: res.statusCode },
            responseTime: Math.round(performance.now() - started),
          },
          'asset served',
        ),
      );
      next();
      return;
    }
    const line = (msg: string) =>
      log.info(
        {
          req: {
            id: res.locals.requestId as string,
            method,
            url: redactUrl(req.originalUrl),
            headers: redactHeaders(req.headers),
            remoteAddress: req.socket.remoteAddress,
          },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
          workspace_id: (res.locals.tenant as Tenant | undefined)?.workspace.id,
        },
        msg,
      );
    res.once('close', () => line(res.writableFinished ? 'request completed' : 'request aborted'));
    next();
  };
}
