export * from './schema';
export * from './pool';
export { migrateToLatest, migrateDown, ensureDatabase } from './migrate';
