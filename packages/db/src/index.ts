export * from './schema';
export * from './pool';
export { prepared, thenCommit, together } from './pipelined';
export { jsonRows } from './rows';
export { migrateToLatest, migrateDown, ensureDatabase } from './migrate';
