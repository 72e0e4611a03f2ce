import pg from 'pg';
import { baseDatabaseUrl } from './env';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.SDX_TEMPLATE_DB;
  if (template) {
    const admin = new pg.Client({ connectionString: baseDatabaseUrl() });
    await admin.connect();
    try {
      await admin.query(`drop database if exists ${template} with (force)`);
    } finally {
      await admin.end();
    }
  }
  const containers = (globalThis as { __containers?: Array<{ stop(): Promise<unknown> }> }).__containers ?? [];
  await Promise.all(containers.map((c) => c.stop()));
}
