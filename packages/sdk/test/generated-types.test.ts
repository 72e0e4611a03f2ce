import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The SDK's types are openapi.yaml's: `npm run generate:types` writes packages/sdk/src/openapi.ts
 * (openapi-typescript, `--default-non-nullable false` so request fields with defaults stay
 * optional), and this fails when the file is stale.
 */
const ROOT = path.resolve(__dirname, '../../..');
const run = promisify(execFile);

it('packages/sdk/src/openapi.ts is generated from the current openapi.yaml', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sdx-types-'));
  try {
    const out = path.join(dir, 'openapi.ts');
    const cli = path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
    await run(process.execPath, [cli, 'openapi.yaml', '--default-non-nullable', 'false', '-o', out], { cwd: ROOT });
    const fresh = readFileSync(out, 'utf8') === readFileSync(path.join(ROOT, 'packages/sdk/src/openapi.ts'), 'utf8');
    expect(fresh ? 'up to date' : 'stale: run npm run generate:types').toBe('up to date');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
