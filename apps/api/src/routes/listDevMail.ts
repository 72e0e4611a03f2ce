import { ApiError } from '@sdx/domain/api';
import { readDevOutbox } from '@sdx/mail';
import type { AppDeps } from '../deps';
import { route } from './route';

/** Loopback addresses, as Node reports a socket's peer (IPv4, IPv6, IPv4-mapped IPv6). */
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * GET /v1/dev/mail — the local dev outbox (issue 52), newest first: outside production without
 * SMTP_URL, what the service would have mailed. Its links are secrets (password resets of any
 * user), so it answers only a caller on the same machine (the socket's peer is a loopback
 * address; X-Forwarded-For is not believed), as a local mail catcher would; needs no key or
 * session. In production, with SMTP_URL set, or to any other caller: 404, as an unknown route.
 */
export const listDevMail = route('listDevMail', {
  // The local dev outbox: outside production and only to a caller on loopback (checked here).
  access: 'public',
  setup: ({ services }: AppDeps) => {
    const dir = services.config.devMailDir;
    return async ({ req, res }) => {
      if (!dir || !LOOPBACK.test(req.socket.remoteAddress ?? ''))
        throw new ApiError('not_found', `No route for ${req.method} ${req.path}.`);
      const limit = Number(req.query.limit ?? 50);
      res.setHeader('Cache-Control', 'no-store');
      res.json(await readDevOutbox(dir, limit));
    };
  },
});
