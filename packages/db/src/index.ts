export * from './schema';
export * from './pool';
export { thenCommit } from './pipelined';
export { migrateToLatest, migrateDown, ensureDatabase } from './migrate';
