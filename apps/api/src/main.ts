import { createServer } from 'node:http';
import { loadConfig } from '@sdx/config';
import { migrateToLatest } from '@sdx/db';
import { createRuntime } from '@sdx/runtime';
import { createApp } from './app';
import { RedisRateLimiter } from './middleware/rate-limit';

/** The API process: stateless; scale it horizontally behind a load balancer. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = createRuntime(config, { name: 'api', dbPoolSize: 20 });
  if (process.env.MIGRATE_ON_START === '1') await migrateToLatest(runtime.db);
  const limiter = new RedisRateLimiter(runtime.redis, config.redisPrefix);
  const app = createApp({ services: runtime.services, registry: runtime.registry, limiter, redis: runtime.redis });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  server.listen(config.port, () => runtime.log.info({ port: config.port }, 'api listening'));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.log.info({ signal }, 'api shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close(() => {
      runtime.close().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
