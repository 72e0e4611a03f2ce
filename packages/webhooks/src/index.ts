export * from './signing';
export * from './retry-schedule';
export * from './address-guard';
export * from './sender';
