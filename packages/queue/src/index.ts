export * from './queues';
export * from './redis';
export * from './consumer';
export * from './live';
