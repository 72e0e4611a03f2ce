export * from './env';
export * from './stack';
export * from './plans';
