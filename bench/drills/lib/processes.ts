import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.resolve(__dirname, '..', '..', '..');

export type AppName = 'api' | 'worker' | 'scheduler';

/** One service process of a drill, its log lines and whether it died. */
export interface AppProcess {
  app: AppName;
  child: ChildProcess;
  /** Lines the process wrote (stdout and stderr), as written. */
  lines: string[];
  /** Set when the process exited without being asked to. */
  died: { code: number | null; signal: NodeJS.Signals | null } | null;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `apps/<app>/src/main.ts` as `npm start` would, with `env` on top of this process's
 * environment: this checkout's, or (`root`) another release's unpacked folder.
 */
export function startApp(app: AppName, env: Record<string, string>, root: string = ROOT): AppProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'apps', app, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stopping = false;
  const proc: AppProcess = {
    app,
    child,
    lines: [],
    died: null,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => proc.lines.push(line));
  child.on('exit', (code, signal) => {
    if (!stopping) proc.died = { code, signal };
  });
  return proc;
}

/** Runs a script of `root` (this checkout or a release's folder) with tsx and only `env` (and PATH, HOME); its stdout. */
export function runNode(root: string, args: string[], env: Record<string, string>): string {
  return execFileSync(process.execPath, ['--import', 'tsx', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}

/** The last line a command printed with `--json`, parsed. */
export function lastJsonLine<T>(output: string): T {
  return JSON.parse(output.trim().split('\n').pop() ?? '{}') as T;
}

/** Log lines that are not one JSON object (a stack dump, a console.error): there should be none. */
export function unstructuredLines(lines: readonly string[]): string[] {
  return lines.filter((line) => {
    if (!line.trim()) return false;
    try {
      return typeof JSON.parse(line) !== 'object';
    } catch {
      return true;
    }
  });
}

/** Parsed JSON log records at warn level or above. */
export function warnings(lines: readonly string[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of lines) {
    try {
      const record = JSON.parse(line) as Record<string, unknown>;
      if (typeof record.level === 'number' && record.level >= 40) out.push(record);
    } catch {
      // counted by unstructuredLines
    }
  }
  return out;
}
