export * from './env';
export * from './stack';
export * from './plans';
export * from './credits';
export * from './private-servers';
export * from './ledger';
