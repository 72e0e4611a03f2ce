export * from './recurrence';
export * from './dispatch';
export * from './scheduler';
