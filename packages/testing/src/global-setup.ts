import pg from 'pg';
import IORedis from 'ioredis';
import type * as Testcontainers from 'testcontainers';
import { ensureConsoleBuild } from '@sdx/console';
import { createDb, migrateToLatest } from '@sdx/db';
import { baseDatabaseUrl, databaseUrlFor, testRedisUrl } from './env';

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * Uses the Postgres and Redis named by DATABASE_URL / REDIS_URL (or the local defaults). Only
 * when neither answers and a Docker engine exists does it start them with testcontainers.
 * Then it builds a migrated template database that every test file clones, and the web
 * console (apps/console/dist) when its build is missing or stale, for the browser tests.
 */
export default async function globalSetup(): Promise<void> {
  process.env.NODE_ENV = 'test';
  await ensureConsoleBuild();
  if (!(await postgresAnswers(baseDatabaseUrl())) || !(await redisAnswers(testRedisUrl()))) {
    await startContainers();
  }
  const TEMPLATE_DB = `sdx_tpl_${process.pid}_${Date.now().toString(36)}`;
  process.env.SDX_TEMPLATE_DB = TEMPLATE_DB;
  const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  const db = createDb({ connectionString: databaseUrlFor(TEMPLATE_DB), max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

async function startContainers(): Promise<void> {
  if (process.env.DATABASE_URL || process.env.REDIS_URL) {
    throw new Error(`Postgres (${baseDatabaseUrl()}) or Redis (${testRedisUrl()}) does not answer.`);
  }
  let testcontainers: typeof Testcontainers;
  try {
    testcontainers = await import('testcontainers');
  } catch {
    throw new Error('Postgres or Redis does not answer, and testcontainers is not available.');
  }
  const { GenericContainer, Wait } = testcontainers;
  const postgres = await new GenericContainer('postgres:16-alpine')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
  process.env.TEST_DATABASE_URL = `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`;
  process.env.TEST_REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}/0`;
  (globalThis as { __containers?: unknown[] }).__containers = [postgres, redis];
}
