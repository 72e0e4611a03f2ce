import { scrape } from '@sdx/metrics';
import { route } from './route';

/** GET /metrics — the process's Prometheus series (docs/deployment.md "Metrics"). */
export const getMetrics = route('getMetrics', {
  access: 'public',
  handler: async ({ res }) => {
    const { contentType, body } = await scrape();
    res.setHeader('Cache-Control', 'no-store');
    res.type(contentType).send(body);
  },
});
