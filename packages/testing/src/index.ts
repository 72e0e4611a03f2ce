export * from './env';
export * from './stack';
