export * from './schema';
export * from './pool';
export { thenCommit, together } from './pipelined';
export { migrateToLatest, migrateDown, ensureDatabase } from './migrate';
