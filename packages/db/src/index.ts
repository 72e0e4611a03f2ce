export * from './schema';
export * from './pool';
export { sendTogether } from './driver';
export { jsonRows } from './rows';
export {
  migrateToLatest,
  migrateSetToLatest,
  MIGRATION_BOUNDS,
  type MigrationBounds,
  migrateDown,
  migrateDownThrough,
  migrationNames,
  ensureDatabase,
  pendingMigrations,
} from './migrate';
export { jsonbText, jsonbTexts, numericText } from './jsonb-text';
