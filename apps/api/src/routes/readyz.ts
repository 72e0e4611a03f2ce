import { sql } from 'kysely';
import { route } from './route';

/** GET /readyz — Postgres and Redis answer. */
export const readyz = route('readyz', {
  access: 'public',
  handler: async ({ deps: { services, redis }, res }) => {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await Promise.race([fn(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 1000))]);
        return 'ok';
      } catch {
        return 'error';
      }
    };
    const [postgres, redisState] = await Promise.all([check(() => sql`select 1`.execute(services.db)), check(() => redis.ping())]);
    const ok = postgres === 'ok' && redisState === 'ok';
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'error', checks: { postgres, redis: redisState } });
  },
});
