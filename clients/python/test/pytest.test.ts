import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * The Python SDK's pytest suite (clients/python/tests), run by Debian's python3 under `npm test`:
 * it starts its own service (tests/serve.ts, a served test stack on this run's migrated template,
 * on the Node that runs jest) and fails this test with pytest's output when any of its tests fails.
 */

const PYTHON = process.env.SDX_PYTHON ?? '/usr/bin/python3';
const ROOT = path.resolve(__dirname, '..');

it('passes the pytest suite of clients/python', async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(PYTHON, ['-m', 'pytest', 'tests', '-q', '-p', 'no:cacheprovider', '-o', 'console_output_style=classic'], {
      cwd: ROOT,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', SDX_NODE: process.execPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ code: status, output }));
  });
  if (code !== 0) throw new Error(`pytest exited with ${code}:\n${output}`);
  expect(output).toMatch(/\d+ passed/);
  expect(output).not.toMatch(/\d+ (failed|error)/);
}, 300_000);
