import { route } from './route';

/** GET /healthz — the process is up. */
export const healthz = route('healthz', {
  access: 'public',
  handler: ({ res }) => {
    res.json({ status: 'ok' });
  },
});
