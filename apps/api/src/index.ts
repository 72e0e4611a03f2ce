/** The API app's public entry, for processes and test harnesses that embed it (main.ts serves it). */
export { createApp } from './app';
export { COUNTS_FOR_MS, HeavyReads, YIELD_MAX_MS } from './middleware/heavy-reads';
export { RedisRateLimiter, type RateLimiter } from './middleware/rate-limit';
export { LOGIN_LIMITS, LoginLimiter } from './middleware/login-limit';
export { ROUTES } from './routes';
export { route, contractOperations, labelOf, type Route, type RouteSpec, type OperationId, type BodyOf } from './routes/route';
export type { Access } from './middleware/access';
export { createApiServer } from './server';
export { LiveHub, type LiveHubOptions } from './live/hub';
