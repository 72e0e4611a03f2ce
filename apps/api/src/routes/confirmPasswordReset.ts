import type { RequestHandler } from 'express';
import { confirmPasswordReset as confirm } from '@sdx/domain/api';
import type { AppDeps } from '../deps';
import { clientMeta } from '../middleware/client';

/**
 * POST /v1/auth/password-reset/confirm — 204: every session of the user ended, every OAuth grant
 * they gave revoked, and with `revoke_keys: true` every key they made; 410 reset_token_invalid.
 */
export const confirmPasswordReset = ({ services }: AppDeps): RequestHandler => async (req, res) => {
  const { token, new_password: password, revoke_keys: revokeKeys } = req.body as { token: string; new_password: string; revoke_keys?: boolean };
  await confirm(services, token, password, { revokeKeys: revokeKeys === true, ip: clientMeta(req).ip });
  res.status(204).end();
};
