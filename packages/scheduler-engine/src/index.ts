export * from './dispatch';
