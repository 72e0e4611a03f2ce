export * from './env';
export * from './stack';
export * from './plans';
export * from './credits';
export * from './grants';
export * from './response-validator';
export * from './sessions';
export * from './fuzz';
export * from './private-servers';
export * from './redis-cluster';
export * from './ledger';
export * from './docs';
export * from './webhook-receiver';
export * from './smtp';
export * from './worker-process';
// Tests wait for a second runtime's Redis as the stack does.
export { untilRedisReady } from '@sdx/runtime';
export * from './s3';
export * from './monitors';
