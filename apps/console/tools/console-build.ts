import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { bootScript } from './boot';

/**
 * The console's build: esbuild bundles src/main.tsx into dist/assets/ (hashed names, code split
 * at each lazily loaded page) and writes dist/index.html, whose one inline script (tools/boot.ts)
 * takes a link's token out of the address bar and then writes the entry's script and styles.
 * The API serves dist/ at /console. A stamp file holds the hash of everything the build reads,
 * so `npm start`, `npm run build` and the test harness rebuild only when a source changed.
 */
export const CONSOLE_ROOT = path.resolve(__dirname, '..');
export const CONSOLE_DIST = path.join(CONSOLE_ROOT, 'dist');
const STAMP = path.join(CONSOLE_DIST, '.source-hash');
const REPO_ROOT = path.resolve(CONSOLE_ROOT, '..', '..');

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const full = path.join(dir, entry);
      return statSync(full).isDirectory() ? files(full) : [full];
    });
}

/**
 * The workspace files outside apps/console the bundle takes: the catalog, the exports' column
 * order (packages/exports/src/columns.ts alone), and the contract's
 * browser entry (the console's tsconfig maps `@sdx/contract` there) with the generated modules it
 * re-exports. A build that reads any other file outside the console and node_modules fails, so
 * this list cannot fall behind the imports.
 */
function workspaceInputs(): string[] {
  return [
    ...files(path.join(REPO_ROOT, 'packages', 'catalog', 'src')),
    ...['browser.ts', 'events.ts', 'openapi.d.ts'].map((file) => path.join(REPO_ROOT, 'packages', 'contract', 'src', file)),
    // The exports' column order (the results browser shows the csv's columns), without the rest of the package.
    path.join(REPO_ROOT, 'packages', 'exports', 'src', 'columns.ts'),
  ];
}

/** The most gzipped JavaScript the first page load may fetch before any lazy page: 250 KiB. */
export const INITIAL_JS_BUDGET_BYTES = 250 * 1024;

/** Hash of the console's sources and the workspace files it takes, its page template and manifest, the lock (library versions) and this file. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  const inputs = [
    ...files(path.join(CONSOLE_ROOT, 'src')),
    ...workspaceInputs(),
    path.join(CONSOLE_ROOT, 'index.html'),
    path.join(CONSOLE_ROOT, 'package.json'),
    path.join(REPO_ROOT, 'package-lock.json'),
    __filename,
    path.join(__dirname, 'boot.ts'),
  ];
  for (const file of inputs) {
    hash.update(path.relative(CONSOLE_ROOT, file)).update('\0');
    if (existsSync(file)) hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

export interface ConsoleBuild {
  /** False when the build on disk was already up to date. */
  built: boolean;
  /** Gzipped bytes of the JavaScript the first page load fetches (the entry and the chunks it imports statically). */
  initialJsGzipBytes: number;
  ms: number;
}

/** Whether dist/ holds a build of the current sources. */
export function consoleBuildIsFresh(): boolean {
  return existsSync(path.join(CONSOLE_DIST, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === sourceHash();
}

/** Builds the console into dist/ unless the build there is of the current sources (or `force`). */
export async function ensureConsoleBuild(options: { force?: boolean } = {}): Promise<ConsoleBuild> {
  const started = performance.now();
  if (!options.force && consoleBuildIsFresh()) {
    return { built: false, initialJsGzipBytes: initialJsGzipBytes(), ms: Math.round(performance.now() - started) };
  }
  const hash = sourceHash();
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  mkdirSync(CONSOLE_DIST, { recursive: true });
  const result = await build({
    absWorkingDir: CONSOLE_ROOT,
    entryPoints: { app: 'src/main.tsx' },
    outdir: path.join(CONSOLE_DIST, 'assets'),
    publicPath: '/console/assets',
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox114', 'safari16.4'],
    jsx: 'automatic',
    minify: true,
    sourcemap: 'linked',
    metafile: true,
    legalComments: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.svg': 'file', '.woff2': 'file' },
    logLevel: 'warning',
  });
  const hashed = new Set(workspaceInputs());
  const unhashed = Object.keys(result.metafile.inputs)
    .map((input) => path.resolve(CONSOLE_ROOT, input))
    .filter(
      (file) =>
        !file.startsWith(path.join(CONSOLE_ROOT, 'src') + path.sep) && !file.split(path.sep).includes('node_modules') && !hashed.has(file),
    );
  if (unhashed.length > 0)
    throw new Error(`the console bundle reads files its stamp does not hash; add them to workspaceInputs(): ${unhashed.join(', ')}`);
  const outputs = result.metafile.outputs;
  const entry = Object.entries(outputs).find(([, out]) => out.entryPoint === 'src/main.tsx');
  if (!entry) throw new Error('esbuild produced no entry for src/main.tsx');
  const [entryFile, entryOut] = entry;
  const asUrl = (file: string) => `/console/assets/${path.basename(file)}`;
  const initialChunks = staticClosure(entryOut.imports, outputs);
  const preloads = initialChunks.map((file) => `<link rel="modulepreload" href="${asUrl(file)}">`);
  const template = readFileSync(path.join(CONSOLE_ROOT, 'index.html'), 'utf8');
  // The tags are written by the inline boot script (tools/boot.ts), after it took any token out of the address bar.
  const tags = [
    ...(entryOut.cssBundle ? [`<link rel="stylesheet" href="${asUrl(entryOut.cssBundle)}">`] : []),
    `<script type="module" src="${asUrl(entryFile)}"></script>`,
    ...preloads,
  ];
  const html = template.replace('<!-- boot -->', `<script>${bootScript(tags)}</script>`);
  if (html === template) throw new Error('index.html has no <!-- boot --> placeholder');
  writeFileSync(path.join(CONSOLE_DIST, 'index.html'), html);
  writeFileSync(
    path.join(CONSOLE_DIST, 'initial.json'),
    JSON.stringify({ entry: path.basename(entryFile), imports: initialChunks.map((file) => path.basename(file)) }),
  );
  writeFileSync(STAMP, hash);
  return { built: true, initialJsGzipBytes: initialJsGzipBytes(), ms: Math.round(performance.now() - started) };
}

/** The chunks a module loads before it runs: its static imports, and theirs. */
function staticClosure(
  imports: Array<{ path: string; kind: string }>,
  outputs: Record<string, { imports: Array<{ path: string; kind: string }> }>,
): string[] {
  const seen = new Set<string>();
  const visit = (list: Array<{ path: string; kind: string }>) => {
    for (const i of list) {
      if (i.kind !== 'import-statement' || seen.has(i.path)) continue;
      seen.add(i.path);
      visit(outputs[i.path]?.imports ?? []);
    }
  };
  visit(imports);
  return [...seen];
}

/** Gzipped size of the JavaScript index.html loads before any lazy page: the entry and its static imports. */
export function initialJsGzipBytes(): number {
  const initial = JSON.parse(readFileSync(path.join(CONSOLE_DIST, 'initial.json'), 'utf8')) as { entry: string; imports: string[] };
  return [initial.entry, ...initial.imports].reduce(
    (sum, file) => sum + gzipSync(readFileSync(path.join(CONSOLE_DIST, 'assets', file)), { level: 9 }).length,
    0,
  );
}

if (require.main === module) {
  ensureConsoleBuild({ force: process.argv.includes('--force') })
    .then((b) => {
      const kib = (bytes: number) => (bytes / 1024).toFixed(1);
      console.log(
        `console ${b.built ? 'built' : 'up to date'} in ${b.ms} ms; initial JS ${kib(b.initialJsGzipBytes)} KiB gzipped (budget ${kib(INITIAL_JS_BUDGET_BYTES)} KiB)`,
      );
      if (b.initialJsGzipBytes >= INITIAL_JS_BUDGET_BYTES) process.exitCode = 1;
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
