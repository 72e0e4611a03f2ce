export * from './schema';
export * from './pool';
export { thenCommit, together } from './pipelined';
export { jsonRows } from './rows';
export { migrateToLatest, migrateDown, ensureDatabase } from './migrate';
