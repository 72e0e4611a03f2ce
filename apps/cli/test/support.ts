import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { builtProcess, type LooseJson } from '@sdx/testing';

export const ROOT = path.resolve(__dirname, '../../..');
/** The bin the workspace install links as node_modules/.bin/sdx (what `npx sdx` runs). */
export const BIN = path.join(ROOT, 'node_modules', '.bin', 'sdx');

let command: string[] = [BIN];

/**
 * From here on in this test file, `sdx` runs the CLI built into one file (apps/cli/src/main.ts,
 * @sdx/sdk compiled in from its source, as the bin runs them under tsx), started by plain node
 * without compiling its TypeScript on every run. For files that run it many times; the others
 * (and `npx sdx`) run the bin.
 */
export async function useBuiltSdx(): Promise<void> {
  command = [await builtProcess('apps/cli/src/main.ts')];
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `sdx` as a child process, with only the environment given (plus PATH and HOME). */
export function sdx(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string } = {},
): Promise<Ran> & { child: ChildProcess } {
  const child = spawn(process.execPath, [...command, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(options.input ?? '');
  const done = new Promise<Ran>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  }) as Promise<Ran> & { child: ChildProcess };
  done.child = child;
  return done;
}

/** The JSON a `--json` run printed; fails the test with its stderr when it did not succeed. */
export function json<T = LooseJson>(ran: Ran): T {
  if (ran.code !== 0) throw new Error(`sdx exited ${ran.code}: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as T;
}
