/** The API app's public entry, for processes and test harnesses that embed it (main.ts serves it). */
export { createApp } from './app';
export { HeavyReads } from './middleware/heavy-reads';
export { RedisRateLimiter, type RateLimiter } from './middleware/rate-limit';
