export * from './queues';
export * from './consumer';
