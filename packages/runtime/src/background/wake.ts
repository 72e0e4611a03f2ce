import type { RedisClient } from '@sdx/queue';

/** What a process holds to wake a background task soon after it wrote work for it. */
export interface TaskWake {
  kick(): void;
}

/** The channel on which runners listen for wakes (a message names a task). */
export function wakeChannel(prefix: string): string {
  return `${prefix}:background:wake`;
}

/**
 * Wakes a task in the processes that run it, over Redis (the API, which runs no background
 * task, wakes the workers' mail sender after a commit that queued mail). Best effort: a wake
 * lost while Redis is away leaves the work to the task's next timed pass.
 */
export function wakeOverRedis(redis: RedisClient, prefix: string, task: string): TaskWake {
  return {
    kick() {
      redis.publish(wakeChannel(prefix), task).catch(() => undefined);
    },
  };
}
