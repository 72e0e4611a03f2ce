import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support';

/** Issue 52: small things a first hour meets in the clients. The three clients are released together: the TypeScript SDK, the CLI and the Python SDK carry one version. */
it('gives @sdx/sdk, @sdx/cli and sdx-client the same version', () => {
  const npm = (file: string) => (JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as { version: string }).version;
  const python = /__version__ = "([^"]+)"/.exec(readFileSync(path.join(ROOT, 'clients/python/src/sdx/_version.py'), 'utf8'))![1];
  const cli = JSON.parse(readFileSync(path.join(ROOT, 'apps/cli/package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect({ sdk: npm('packages/sdk/package.json'), cli: npm('apps/cli/package.json'), python }).toEqual({
    sdk: '1.0.0',
    cli: '1.0.0',
    python: '1.0.0',
  });
  expect(cli.dependencies['@sdx/sdk']).toBe('1.0.0');
});

/** `sdx webhooks listen --help` says each default once, in words. */
it('prints each default of webhooks listen once', async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'apps/cli/bin/sdx.js'), 'webhooks', 'listen', '--help'], {
    env: { PATH: process.env.PATH ?? '', HOME: ROOT },
  });
  const help = stdout.replace(/\s+/g, ' ');
  expect(help).toContain('--events <types> comma-separated event types (default: all)');
  expect(help).toContain('--port <port> port the relay listens on (default: any free one)');
  for (const line of stdout.split('--').slice(1)) expect(line.match(/\(default:/g)?.length ?? 0).toBeLessThanOrEqual(1);
}, 30_000);
