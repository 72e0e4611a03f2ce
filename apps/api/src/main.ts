import { createServer } from 'node:http';
import { loadConfig } from '@sdx/config';
import { migrateToLatest } from '@sdx/db';
import { addQueueCountsSource, bullQueueCounts, collectProcessMetrics } from '@sdx/metrics';
import { createRuntime, onShutdown } from '@sdx/runtime';
import { createApp } from './app';
import { RedisRateLimiter } from './middleware/rate-limit';

/** The API process: stateless; scale it horizontally behind a load balancer. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'api', dbPoolSize: 20 });
  if (process.env.MIGRATE_ON_START === '1') await migrateToLatest(runtime.db);
  collectProcessMetrics();
  // sdx_queue_jobs comes from the API only: every replica reads the same queues.
  addQueueCountsSource(bullQueueCounts([runtime.queues.jobs, runtime.queues.batchChildren]));
  const limiter = new RedisRateLimiter(runtime.redis, config.redisPrefix);
  const app = createApp({ services: runtime.services, registry: runtime.registry, limiter, redis: runtime.redis });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  server.listen(config.port, () => runtime.log.info({ port: config.port }, 'api listening'));

  onShutdown(
    runtime.log,
    'api',
    async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await runtime.close();
    },
    10_000,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
