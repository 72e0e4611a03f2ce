import type { RequestHandler } from 'express';
import { sql } from 'kysely';
import type { ApiDeps } from '../deps';

/** GET /healthz — the process is up. */
export const healthz = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  res.json({ status: 'ok' });
};

/** GET /readyz — Postgres and Redis answer. */
export const readyz = ({ services, redis }: ApiDeps): RequestHandler => async (_req, res) => {
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
};
