export * from './types';
export * from './sandbox';
export * from './registry';
export * from './upstream';
export * from './live';
export * from './coverage';
export * from './fallback';
