import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDb, migrateToLatest } from '@sdx/db';

/** Where the benchmarks find Postgres and Redis: DATABASE_URL / REDIS_URL, else the local defaults. */
export function adminDatabaseUrl(): string {
  const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = '/postgres';
  return url.toString();
}

export function benchRedisUrl(): string {
  return process.env.REDIS_URL || 'redis://127.0.0.1:6379/0';
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one benchmark run; drop() removes it. */
export async function createBenchDatabase(label: string): Promise<BenchDatabase> {
  const name = `sdx_bench_${label}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  const db = createDb({ connectionString: url.toString(), max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminDatabaseUrl() });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

export function benchPrefix(label: string): string {
  return `sdxbench${label}${randomBytes(3).toString('hex')}`;
}
