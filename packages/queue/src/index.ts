export * from './queues';
export * from './consumer';
export * from './live';
