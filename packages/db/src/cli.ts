import { createLogger, loadConfig } from '@sdx/config';
import { ensureDatabase, migrateToLatest } from './migrate';
import { createDb } from './pool';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger({ logLevel: config.logLevel === 'silent' ? 'silent' : 'info' });
  await ensureDatabase(config.databaseUrl);
  const db = createDb({ connectionString: config.databaseUrl, max: 1, applicationName: 'migrate' });
  try {
    const applied = await migrateToLatest(db);
    log.info({ applied }, applied.length ? 'migrations applied' : 'database schema is up to date');
  } finally {
    await db.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
