/** Where tests find Postgres and Redis: DATABASE_URL / REDIS_URL, else the local defaults. */
/** The migrated template of this jest run (one per run, so parallel runs never disturb each other). */
export function templateDb(): string {
  const name = process.env.SDX_TEMPLATE_DB;
  if (!name) throw new Error('SDX_TEMPLATE_DB is not set: run tests through jest (globalSetup creates it)');
  return name;
}

export function baseDatabaseUrl(): string {
  return process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379/0';
}

export function databaseUrlFor(name: string): string {
  const url = new URL(baseDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

/** SECRETS_KEY of tests and benches that run with NODE_ENV=production (where the service requires one). */
export const TEST_SECRETS_KEY = 'c2R4LXRlc3Qtc2VjcmV0cy1rZXktMzItYnl0ZXMhISE=';
