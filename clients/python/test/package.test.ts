import { spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ServedStack, startServedStack } from '@sdx/testing';

/**
 * The Python package as a user gets it: sdist and wheel built offline by Debian's python3-build
 * (`python3 -m build --no-isolation`, setuptools), the wheel installed into a fresh venv that sees
 * the system's httpx, and a smoke test run from the installed package against a served stack.
 * The build runs on a copy of clients/python, so the checkout gets no build/ or egg-info.
 */

const PYTHON = process.env.SDX_PYTHON ?? '/usr/bin/python3';
const SOURCE = path.resolve(__dirname, '..');

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${output}`))));
  });
}

let served: ServedStack;
let work: string;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  work = await mkdtemp(path.join(os.tmpdir(), 'sdx-python-'));
});
afterAll(async () => {
  await served.close();
  await rm(work, { recursive: true, force: true });
});

it('builds an sdist and a wheel, installs the wheel into a fresh venv, and the installed package works', async () => {
  const copy = path.join(work, 'src');
  await cp(SOURCE, copy, { recursive: true, filter: (from) => !/(__pycache__|\.mypy_cache|\.pytest_cache|node_modules|\/build$|\.egg-info)/.test(from) });
  const dist = path.join(work, 'dist');
  await run(PYTHON, ['-m', 'build', '--no-isolation', '--sdist', '--wheel', '--outdir', dist, copy], { cwd: copy });
  const built = await readdir(dist);
  const wheel = built.find((name) => /^sdx_client-[\d.]+-py3-none-any\.whl$/.test(name));
  const sdist = built.find((name) => /^sdx[-_]client-[\d.]+\.tar\.gz$/.test(name));
  expect({ wheel, sdist, count: built.length }).toEqual({ wheel: expect.any(String), sdist: expect.any(String), count: 2 });
  const sdistFiles = await run('tar', ['-tzf', path.join(dist, sdist!)], { cwd: work });
  expect(sdistFiles).toMatch(/src\/sdx\/py\.typed/);
  expect(sdistFiles).toMatch(/pyproject\.toml/);

  const venv = path.join(work, 'venv');
  await run(PYTHON, ['-m', 'venv', '--system-site-packages', venv], { cwd: work });
  const python = path.join(venv, 'bin', 'python');
  await run(python, ['-m', 'pip', 'install', '--no-deps', '--no-index', '--disable-pip-version-check', '--no-input', path.join(dist, wheel!)], { cwd: work });
  const shown = await run(python, ['-m', 'pip', 'show', '--disable-pip-version-check', 'sdx-client'], { cwd: work });
  expect(shown).toMatch(/Requires: httpx/);

  const ws = await served.stack.workspace({ credits: 10_000 });
  const smoke = await run(python, [path.join(SOURCE, 'tests', 'smoke_installed.py')], {
    cwd: work,
    env: { SDX_API_KEY: ws.apiKey, SDX_BASE_URL: served.url, PYTHONPATH: '' },
  });
  expect(smoke).toMatch(/job job_\w+ completed with 1500 items/);
}, 240_000);
