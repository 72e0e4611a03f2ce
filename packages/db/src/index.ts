export * from './schema';
export * from './pool';
export { sendTogether } from './driver';
export { jsonRows } from './rows';
export { migrateToLatest, migrateDown, ensureDatabase, pendingMigrations } from './migrate';
