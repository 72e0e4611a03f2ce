/** The worker app's public entry, for processes and test harnesses that embed it (main.ts runs it). */
export { startWorker, type RunningWorker, type WorkerOptions } from './worker';
export { PER_WEBHOOK_IN_FLIGHT, WebhookLanes } from '@sdx/runtime';
