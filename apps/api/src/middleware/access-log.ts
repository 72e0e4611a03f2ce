import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Tenant } from '@sdx/domain';

/**
 * One line per request at info level (but /healthz and /metrics), written when the response is finished (or the client
 * went away first). The request's headers go through the logger's redaction, so a key never
 * reaches the log. Nothing is computed when info is off, and no logger is made per request.
 */
export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    if (req.url === '/healthz' || req.url === '/metrics' || !log.isLevelEnabled('info')) {
      next();
      return;
    }
    const started = performance.now();
    // Read now: a HEAD request is handled as GET further on (see app.ts).
    const method = req.method;
    const line = (msg: string) =>
      log.info(
        {
          req: { id: res.locals.requestId, method, url: req.originalUrl, headers: req.headers, remoteAddress: req.socket.remoteAddress },
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
