// `npm run build` / `npm pack` (prepack): dist/sdx.cjs, the command bin/sdx.js runs when the
// package is installed. Its dependencies (@sdx/sdk, commander, cli-progress, picocolors, and the
// MCP SDK that `sdx mcp` loads) stay imports, installed with the package.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
rmSync(path.join(here, 'dist'), { recursive: true, force: true });
await build({
  absWorkingDir: here,
  entryPoints: ['src/main.ts'],
  outfile: 'dist/sdx.cjs',
  bundle: true,
  packages: 'external',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  tsconfigRaw: '{}',
});
