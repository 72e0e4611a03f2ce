import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { type ServedStack, startServedStack } from '@sdx/testing';
import { ROOT } from './support';

/**
 * `npm pack` of @sdx/sdk and @sdx/cli, as a user would install them: the tarballs hold their
 * builds (made by prepack), the SDK loads with require and with import, type-checks for both, has
 * no Node module on its browser path, and the packed `sdx` runs on the packed SDK.
 */

const run = promisify(execFile);

let dir: string;
let consumer: string;
let sdkFiles: string[];
let cliFiles: string[];
let tarballs: string[] = [];
let cliManifest: { bin: Record<string, string>; dependencies: Record<string, string> };

async function pack(workspace: string): Promise<{ filename: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: path.join(ROOT, workspace),
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { filename: path.join(dir, packed.filename), files: packed.files.map((f) => f.path).sort() };
}

/** Unpacks a tarball as node_modules/<name> of the consumer directory. */
async function install(tarball: string, name: string): Promise<void> {
  const staging = mkdtempSync(path.join(dir, 'unpack-'));
  await run('tar', ['xzf', tarball, '-C', staging]);
  mkdirSync(path.dirname(path.join(consumer, 'node_modules', name)), { recursive: true });
  renameSync(path.join(staging, 'package'), path.join(consumer, 'node_modules', name));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-pack-'));
  consumer = path.join(dir, 'consumer');
  mkdirSync(path.join(consumer, 'node_modules'), { recursive: true });
  const sdk = await pack('packages/sdk');
  const cli = await pack('apps/cli');
  sdkFiles = sdk.files;
  cliFiles = cli.files;
  tarballs = [sdk.filename, cli.filename];
  await install(sdk.filename, '@sdx/sdk');
  await install(cli.filename, '@sdx/cli');
  cliManifest = JSON.parse(readFileSync(path.join(consumer, 'node_modules/@sdx/cli/package.json'), 'utf8'));
  // The SDK's dependencies, as npm would install them beside it.
  for (const dependency of ['openapi-fetch', 'eventsource-parser']) {
    symlinkSync(path.join(ROOT, 'node_modules', dependency), path.join(consumer, 'node_modules', dependency));
  }
}, 120_000);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('packs the SDK with its ESM, CommonJS and browser builds, declarations and README, and no source', () => {
  for (const file of [
    'README.md',
    'package.json',
    'dist/index.cjs',
    'dist/index.mjs',
    'dist/index.browser.mjs',
    'dist/index.d.ts',
    'dist/index.d.mts',
    'dist/openapi.d.ts',
  ])
    expect(sdkFiles).toContain(file);
  expect(sdkFiles.filter((f) => !f.startsWith('dist/') && f !== 'README.md' && f !== 'package.json')).toEqual([]);
});

it('packs the CLI with its bin and build', () => {
  expect(cliFiles).toEqual(expect.arrayContaining(['README.md', 'bin/sdx.js', 'dist/sdx.cjs', 'package.json']));
  expect(cliFiles.some((f) => f.startsWith('src/') || f.startsWith('test/'))).toBe(false);
  expect(cliManifest.bin).toEqual({ sdx: 'bin/sdx.js' });
  expect(Object.keys(cliManifest.dependencies).sort()).toEqual([
    '@modelcontextprotocol/sdk',
    '@sdx/sdk',
    'cli-progress',
    'commander',
    'picocolors',
  ]);
});

it('loads the packed SDK with require and with import', async () => {
  const check = `
    const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test' });
    const secret = 'whsec_' + btoa('0123456789abcdef0123456789abcdef');
    sdk.signWebhook(body, secret, { id: 'evt_1' })
      .then((headers) => sdk.verifyWebhook(body, headers, secret))
      .then((event) => console.log(typeof sdk.Client, new sdk.Client({ apiKey: 'k' }).baseUrl, event.type, sdk.DEFAULT_BASE_URL));`;
  const cjs = await run(process.execPath, ['-e', `const sdk = require('@sdx/sdk');${check}`], { cwd: consumer });
  expect(cjs.stdout.trim()).toBe('function http://localhost:3000 webhook.test http://localhost:3000');
  const esm = await run(process.execPath, ['--input-type=module', '-e', `import * as sdk from '@sdx/sdk';${check}`], { cwd: consumer });
  expect(esm.stdout.trim()).toBe('function http://localhost:3000 webhook.test http://localhost:3000');
});

it('type-checks a consumer of the packed SDK, for import and for require', async () => {
  writeFileSync(
    path.join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'node16',
        moduleResolution: 'node16',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        strict: true,
        noEmit: true,
      },
    }),
  );
  const code = `
    import { ApiError, Client, type Job, RateLimitError } from '@sdx/sdk';
    const sdx = new Client({ apiKey: 'sdx_live_x', baseUrl: 'http://localhost:3000' });
    export async function latest(): Promise<Job | undefined> {
      try {
        for await (const job of sdx.jobs.list({ limit: 10 })) return job;
      } catch (error) {
        if (error instanceof RateLimitError) console.log(error.retryAfter);
        else if (error instanceof ApiError) console.log(error.code, error.requestId);
      }
      return undefined;
    }`;
  writeFileSync(path.join(consumer, 'esm.mts'), code);
  writeFileSync(path.join(consumer, 'cjs.cts'), code);
  const tsc = require.resolve('typescript/bin/tsc');
  await run(process.execPath, [tsc, '-p', consumer]).catch((error: { stdout: string }) => {
    throw new Error(`tsc found problems:\n${error.stdout}`);
  });
});

it('bundles the browser entry with no Node module', async () => {
  writeFileSync(
    path.join(consumer, 'page.js'),
    "import { Client } from '@sdx/sdk';\nwindow.sdx = new Client({ baseUrl: location.origin });\n",
  );
  const result = await build({
    absWorkingDir: consumer,
    entryPoints: ['page.js'],
    bundle: true,
    platform: 'browser',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.some((input) => input.includes('index.browser.mjs'))).toBe(true);
  expect(inputs.filter((input) => input.startsWith('node:') || input.includes('file-sink'))).toEqual([]);
});

describe('the packed sdx', () => {
  let served: ServedStack;
  beforeAll(async () => {
    served = await startServedStack({ withWorker: true });
  }, 60_000);
  afterAll(async () => {
    await served.close();
  });

  it('runs its bin on the packed SDK', async () => {
    const bin = path.join(consumer, 'node_modules/@sdx/cli/bin/sdx.js');
    // commander, cli-progress and picocolors as npm installs them for the workspace: found through NODE_PATH.
    const nodePath = [path.join(ROOT, 'apps/cli/node_modules'), path.join(ROOT, 'node_modules')].join(path.delimiter);
    const env = { PATH: process.env.PATH ?? '', HOME: dir, NODE_PATH: nodePath, SDX_BASE_URL: served.url };
    expect((await run(process.execPath, [bin, '--version'], { env })).stdout.trim()).toBe('1.0.0');
    const platforms = JSON.parse((await run(process.execPath, [bin, 'platforms', '--json'], { env })).stdout) as Array<{
      platform: string;
    }>;
    expect(platforms.map((p) => p.platform).sort()).toEqual(['facebook', 'instagram', 'tiktok', 'twitter', 'youtube']);
    const ws = await served.stack.workspace();
    const account = JSON.parse(
      (await run(process.execPath, [bin, 'account', '--json'], { env: { ...env, SDX_API_KEY: ws.apiKey } })).stdout,
    );
    expect(account.organization_id).toBe(ws.workspaceId);
    const help = (await run(process.execPath, [bin, '--help'], { env })).stdout;
    for (const command of ['login', 'extract', 'jobs', 'batches', 'schedules', 'platforms', 'mcp']) expect(help).toContain(command);
  });

  /**
   * The README's command-line block: packed and installed from the clone's tarballs (what
   * beforeAll did, into its own folder rather than /tmp), then `sdx` signs in with the key on
   * stdin, runs the 25,000-follower job with --wait and exports it. Never `npx sdx`.
   */
  it('runs the README command-line block on the packed packages', async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    // `npx sdx` appears only to warn against it.
    expect(readme.match(/npx sdx\b/g)?.length ?? 0).toBe(readme.match(/not `npx sdx`/g)?.length ?? 0);
    const block = /install them from the tarballs of this clone[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1];
    const lines = block
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.replace(/\s+# .*$/, ''));
    expect(lines[0]).toBe('(cd packages/sdk && npm pack --pack-destination /tmp) && (cd apps/cli && npm pack --pack-destination /tmp)');
    expect(lines[1]).toBe(`npm install -g ${tarballs.map((file) => `/tmp/${path.basename(file)}`).join(' ')}`);
    const bin = path.join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      path.join(bin, 'sdx'),
      `#!/bin/sh\nexec "${process.execPath}" "${path.join(consumer, 'node_modules/@sdx/cli/bin/sdx.js')}" "$@"\n`,
      { mode: 0o755 },
    );
    const home = mkdtempSync(path.join(dir, 'home-'));
    const nodePath = [path.join(ROOT, 'apps/cli/node_modules'), path.join(ROOT, 'node_modules')].join(path.delimiter);
    const env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      NODE_PATH: nodePath,
      SDX_BASE_URL: served.url,
    };
    const ws = await served.stack.workspace({ credits: 100_000 });
    let jobId = '';
    for (const line of lines.slice(2)) {
      expect(line.startsWith('sdx ')).toBe(true);
      const script = line.replaceAll('<job_id>', jobId);
      const stdout = await new Promise<string>((resolve, reject) => {
        const child = execFile(
          'bash',
          ['-euo', 'pipefail', '-c', script],
          { cwd: home, env, maxBuffer: 16 * 1024 * 1024 },
          (error, out, err) => (error ? reject(new Error(`${script} failed: ${err}`)) : resolve(out)),
        );
        child.stdin!.end(`${ws.apiKey}\n`);
      });
      if (line.startsWith('sdx jobs create')) {
        expect(stdout).toMatch(/completed/);
        jobId = /job_[0-9A-Za-z]+/.exec(stdout)![0];
      }
    }
    expect(jobId).not.toBe('');
    expect(readFileSync(path.join(home, 'followers.csv'), 'utf8').trim().split('\n')).toHaveLength(25_001);
  }, 120_000);

  /**
   * docs/sdk.md's quick start, verbatim, saved by a user in a folder of their own outside the
   * repository (an ES module package, as `npm init` with "type": "module" makes): as a plain .mjs
   * file for Node, and as a .ts file run by tsx. Both import the packed SDK.
   */
  it.each(['quickstart.mjs', 'quickstart.ts'])(
    'runs the SDK quick start from the docs as %s',
    async (file) => {
      const docs = readFileSync(path.join(ROOT, 'docs/sdk.md'), 'utf8');
      const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(docs)![1];
      const project = path.join(consumer, `project-${path.extname(file).slice(1)}`);
      mkdirSync(project, { recursive: true });
      // As docs/sdk.md makes it: `npm init -y && npm pkg set type=module` (offline, no install).
      await run('npm', ['init', '-y'], { cwd: project });
      await run('npm', ['pkg', 'set', 'type=module'], { cwd: project });
      expect(JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')).type).toBe('module');
      expect(readFileSync(path.join(ROOT, 'docs/sdk.md'), 'utf8')).toContain('npm init -y && npm pkg set type=module');
      writeFileSync(path.join(project, file), quickStart);
      const ws = await served.stack.workspace({ credits: 100_000 });
      const env = { PATH: process.env.PATH ?? '', HOME: dir, SDX_API_KEY: ws.apiKey, SDX_BASE_URL: served.url };
      const command = file.endsWith('.ts') ? [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), file] : [file];
      const { stdout } = await run(process.execPath, command, { cwd: project, env, maxBuffer: 16 * 1024 * 1024 });
      expect(stdout).toContain('25000 followers written to followers.csv');
      expect(readFileSync(path.join(project, 'followers.csv'), 'utf8').trim().split('\n')).toHaveLength(25_001);
    },
    120_000,
  );
});
