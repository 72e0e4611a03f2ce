import { applyHeapGrowth, loadConfig } from '@sdx/config';
import { migrateToLatest } from '@sdx/db';
import { addQueueCountsSource, bullQueueCounts, collectProcessMetrics } from '@sdx/metrics';
import { createRuntime, onShutdown, untilDependenciesReady, wakeOverRedis } from '@sdx/runtime';
import { createApp } from './app';
import { HeavyReads } from './middleware/heavy-reads';
import { RedisRateLimiter } from './middleware/rate-limit';
import { createApiServer } from './server';
import { prepareReference } from './routes/reference';

/** Time past SYNC_TIMEOUT_MS a shutdown allows for the last responses to be written. */
const SHUTDOWN_MARGIN_MS = 5_000;

/** The API process: stateless; scale it horizontally behind a load balancer. */
async function main(): Promise<void> {
  const config = loadConfig();
  applyHeapGrowth(config);
  const runtime = createRuntime(config, { name: 'api', dbPoolSize: 20 });
  if (process.env.MIGRATE_ON_START === '1') await migrateToLatest(runtime.db);
  collectProcessMetrics();
  // sdx_queue_jobs comes from the API only: every replica reads the same queues.
  addQueueCountsSource(bullQueueCounts([runtime.queues.jobs, runtime.queues.batchChildren]));
  const limiter = new RedisRateLimiter(runtime.redis, config.redisPrefix);
  const drain = new AbortController();
  const heavyReads = HeavyReads.fromConfig(config);
  // No background task runs here (docs/deployment.md "Background work"): the routes wake the
  // workers' mail and recharge tasks over Redis after a commit that gave them work.
  const mailer = wakeOverRedis(runtime.redis, config.redisPrefix, 'mail');
  const app = createApp({
    services: runtime.services,
    registry: runtime.registry,
    limiter,
    redis: runtime.redis,
    draining: drain.signal,
    heavyReads,
    mailer,
  });
  const server = createApiServer(app);
  // The port opens (and `api listening` is said) once Postgres and Redis answer: the load
  // balancer's first request never meets a rate limiter whose Redis is still connecting.
  await untilDependenciesReady(runtime);
  // The reference (/docs, its script, /openapi.json) is made and compressed once, before the first visitor.
  prepareReference();
  server.listen(config.port, () => runtime.log.info({ port: config.port }, 'api listening'));

  // On SIGTERM: stop accepting, answer every POST /v1/extract still waiting with 202 and its
  // job (pollable), let requests in flight finish, then close. The grace outlasts the longest
  // wait a request can be in, SYNC_TIMEOUT_MS.
  onShutdown(
    runtime.log,
    'api',
    async () => {
      drain.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response goes out: close them then.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      server.closeIdleConnections();
      await closed;
      clearInterval(sweep);
      await heavyReads.close();
      await runtime.close();
    },
    Math.max(10_000, config.syncTimeoutMs + SHUTDOWN_MARGIN_MS),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
