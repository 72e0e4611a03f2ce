export * from './series';
export * from './server';
