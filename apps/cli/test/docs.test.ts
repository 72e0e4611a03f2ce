import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { codeBlocks, type SeededWorkspace, type ServedStack, startServedStack, type TestStack } from '@sdx/testing';
import { ROOT } from './support';

/**
 * docs/cli.md: its `sh` blocks run in order, in one directory, with `sdx` on PATH as `npx sdx`
 * finds it, against the real service. The first signs in from stdin; the others use what it
 * stored (no SDX_API_KEY in their environment).
 */

const blocks = codeBlocks('cli.md', 'sh');

let stack: TestStack;
let served: ServedStack;
let baseUrl: string;
let dir: string;
let ws: SeededWorkspace;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  ({ stack, url: baseUrl } = served);
  ws = await stack.workspace({ credits: 100_000 });
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-cli-docs-'));
});
afterAll(async () => {
  await served.close();
  rmSync(dir, { recursive: true, force: true });
});

function bash(script: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      ['-euo', 'pipefail', '-c', script],
      {
        cwd: dir,
        env: {
          PATH: `${path.join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
          HOME: dir,
          XDG_CONFIG_HOME: path.join(dir, 'config'),
          SDX_BASE_URL: baseUrl,
        },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        error ? reject(new Error(`docs/cli.md block failed (${error.code}):\n${script}\n${stderr}`)) : resolve({ stdout, stderr }),
    );
    child.stdin!.end(`${ws.apiKey}\n`);
  });
}

/** What each block, in page order, must leave or print (the others only succeed). */
const checks: Record<number, (stdout: string) => void> = {
  0: (out) => {
    expect(statSync(path.join(dir, 'config', 'sdx', 'config.json')).mode & 0o777).toBe(0o600);
    expect(out).toContain(ws.workspaceId);
  },
  1: (out) => {
    expect(out).toMatch(/^status +completed$/m);
    expect(out).toMatch(/^results +25,000$/m);
  },
  2: () => expect(readFileSync(path.join(dir, 'posts.csv'), 'utf8').trim().split('\n')).toHaveLength(13),
};

it('has shell examples', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(5);
});

// In page order: each block may use what the ones before it made (the login, files, IDs).
blocks.forEach((block, i) => {
  it(
    `runs block ${i + 1}: ${block.split('\n')[0]}`,
    async () => {
      const { stdout } = await bash(block);
      checks[i]?.(stdout);
    },
    i === 1 ? 180_000 : 120_000,
  );
});
