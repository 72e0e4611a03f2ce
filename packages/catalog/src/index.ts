export * from './catalog';
export * from './targets';
