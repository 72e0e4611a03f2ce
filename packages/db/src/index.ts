export * from './schema';
export * from './pool';
export { sendTogether } from './driver';
export { jsonRows } from './rows';
export { migrateToLatest, migrateDown, migrateDownThrough, migrationNames, ensureDatabase, pendingMigrations } from './migrate';
