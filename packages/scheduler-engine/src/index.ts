export * from './dispatch';
export * from './scheduler';
