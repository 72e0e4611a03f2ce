// `npm run build` / `npm pack` (prepack): the package's dist/, from src/.
//   dist/index.mjs, dist/index.cjs    Node 20+ (ESM and CommonJS)
//   dist/index.browser.mjs            browsers and other fetch runtimes: no Node module on its path
//   dist/*.d.ts, dist/index.d.mts     declarations (tsc), for require and for import
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'dist');
const manifest = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8'));
/** Dependencies stay imports, installed beside the package (openapi-fetch, eventsource-parser). */
const external = Object.keys(manifest.dependencies ?? {});

rmSync(dist, { recursive: true, force: true });

const common = {
  absWorkingDir: here,
  entryPoints: ['src/index.ts'],
  bundle: true,
  external,
  sourcemap: true,
  logLevel: 'warning',
  tsconfigRaw: '{}',
};

/** The browser build swaps Node's file sink for one that refuses paths. */
const browserSink = {
  name: 'browser-file-sink',
  setup(b) {
    b.onResolve({ filter: /\/platform\/file-sink$/ }, (args) => ({ path: path.join(args.resolveDir, `${args.path}.browser.ts`) }));
  },
};

await Promise.all([
  build({ ...common, platform: 'node', target: 'node20', format: 'esm', outfile: 'dist/index.mjs' }),
  build({ ...common, platform: 'node', target: 'node20', format: 'cjs', outfile: 'dist/index.cjs' }),
  build({ ...common, platform: 'browser', target: 'es2022', format: 'esm', outfile: 'dist/index.browser.mjs', plugins: [browserSink] }),
]);

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.build.json')], { stdio: 'inherit' });
// import's declarations: the same names, as an ES module
writeFileSync(path.join(dist, 'index.d.mts'), "export * from './index.js';\n");
