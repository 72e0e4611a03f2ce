import { previewInvitation as preview } from '@sdx/domain/api';
import { route } from './route';

/** GET /v1/invitations/preview — 200, the invitation's workspace and inviter, for the holder of its token. */
export const previewInvitation = route('previewInvitation', {
  access: 'public',
  handler: async ({ deps: { services }, res, query }) => {
    res.json(await preview(services.db, String(query.token)));
  },
});
