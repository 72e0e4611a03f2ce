export * from './env';
export * from './stack';
export * from './plans';
export * from './credits';
export * from './response-validator';
export * from './sessions';
export * from './fuzz';
