import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { testRedisUrl } from './env';
import type { TestStack } from './stack';

const ROOT = path.resolve(__dirname, '../../..');

/** A worker process of a test's stack, in its own process group, with its output collected. */
export interface WorkerProcess {
  proc: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL to its whole process group, if it still runs. */
  kill(): void;
}

/**
 * Starts `apps/worker/src/main.ts` against the stack's database and Redis prefix.
 * `direct` runs node with tsx's loader, so a signal reaches the worker's own handler; otherwise
 * `npx tsx` (tsx runs node as a grandchild, which a group SIGKILL still reaches).
 */
export function spawnWorkerProcess(stack: TestStack, env: Record<string, string>, options: { direct?: boolean } = {}): WorkerProcess {
  const [command, args] = options.direct
    ? [process.execPath, ['--import', 'tsx', 'apps/worker/src/main.ts']]
    : ['npx', ['tsx', 'apps/worker/src/main.ts']];
  const proc = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      DATABASE_URL: stack.databaseUrl,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: stack.config.redisPrefix,
      WORKER_CONCURRENCY: '2',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
  let output = '';
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return {
    proc,
    output: () => output,
    kill: () => {
      if (!proc.pid || proc.exitCode !== null || proc.signalCode !== null) return;
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
