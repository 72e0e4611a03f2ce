import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { codeBlocks, type SeededWorkspace, type ServedStack, startServedStack, type TestStack } from '@sdx/testing';

/**
 * docs/sdk.md: each `ts` block is a complete script. They type-check against the SDK, and each
 * runs as its own process (tsx, @sdx/sdk resolved to the source) against the real service.
 */

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const blocks = codeBlocks('sdk.md', 'ts');

let stack: TestStack;
let served: ServedStack;
let baseUrl: string;
let dir: string;
let ws: SeededWorkspace;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  ({ stack, url: baseUrl } = served);
  ws = await stack.workspace({ credits: 200_000 });
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-sdk-docs-'));
  blocks.forEach((block, i) => writeFileSync(path.join(dir, `example-${i}.mts`), block));
});
afterAll(async () => {
  await served.close();
  rmSync(dir, { recursive: true, force: true });
});

it('has examples, and they type-check against the SDK', async () => {
  expect(blocks.length).toBeGreaterThanOrEqual(6);
  // tsc in its own process: a compile would hold this one's event loop, which serves the stack.
  const tsconfig = {
    compilerOptions: {
      target: 'es2022',
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['es2022'],
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules', '@types')],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      esModuleInterop: true,
      paths: { '@sdx/sdk': [path.join(ROOT, 'packages/sdk/src/index.ts')] },
    },
    files: blocks.map((_, i) => `example-${i}.mts`),
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', dir], { maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { stdout?: string; message: string }) => {
      throw new Error(`docs/sdk.md examples do not type-check:\n${error.stdout ?? error.message}`);
    },
  );
});

async function runExample(i: number): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ['--import', pathToFileURL(require.resolve('tsx')).href, path.join(dir, `example-${i}.mts`)],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        SDX_API_KEY: ws.apiKey,
        SDX_BASE_URL: baseUrl,
        TSX_TSCONFIG_PATH: path.join(ROOT, 'tsconfig.json'),
      },
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`example ${i + 1} of docs/sdk.md failed:\n${blocks[i]}\n${error.stderr ?? error.message}`);
  });
  return stdout;
}

/** What each example, in page order, must print. */
const checks: Array<(stdout: string) => void> = [
  (out) => {
    expect(out).toContain('25000 followers written to followers.csv');
    expect(readFileSync(path.join(dir, 'followers.csv'), 'utf8').trim().split('\n')).toHaveLength(25_001);
  },
  (out) => expect(out).toBe('twitter followers: default 12, at most 25000\ninstagram profile: default 1\n'),
  (out) => expect(out).toMatch(/^completed \[/m),
  (out) => expect(out).toMatch(/jobs on the first page/),
  (out) => expect(out).toMatch(/^job_\w+: 25000 items$/m),
  (out) => expect(out).toMatch(/^\d+ bytes \(application\/vnd\.openxmlformats/m),
  (out) => expect(out).toMatch(/^422 validation_error \[ 'body\.limit' \]/m),
  (out) => expect(out.trim()).toBe('true true'),
  (out) => expect(out).toMatch(/^verified webhook\.test evt_1\n204$/m),
];

it('checks what each example prints', () => {
  expect(checks).toHaveLength(blocks.length);
});

blocks.forEach((block, i) => {
  // The first, the quick start, makes and exports 25,000 results: more time on a busy machine.
  const gist = block.split('\n').find((line) => line.trim() !== '' && !line.startsWith('import ') && !line.includes('new Client')) ?? '';
  it(
    `runs example ${i + 1}: ${gist}`,
    async () => {
      checks[i](await runExample(i));
    },
    i === 0 ? 180_000 : 120_000,
  );
});
