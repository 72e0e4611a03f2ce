import { readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { ensureConsoleBuild } from '@sdx/console';
import { PROCESS_BUNDLE } from './bundle';
import { DEV_ONLY_IMPORTS, TEST_ONLY_PACKAGES } from './check-deps';

/**
 * `npm run build`: compiles each process of the service into one file of dist/ that plain
 * `node` runs (the production image runs nothing else):
 *
 *   dist/api.js · dist/admin.js · dist/worker.js · dist/scheduler.js · dist/migrate.js
 *
 * and the web console into apps/console/dist (served by the API at /console), unless the
 * build there is of the current sources.
 *
 * The workspace's own packages (@sdx/*) are compiled into each file; every other package stays
 * an import of node_modules, installed by `npm ci --omit=dev`. Types are checked apart, by
 * `npm run typecheck` (tsc); see docs/decisions.md "Production build" for why a bundler.
 *
 * Then it checks that each such import is a runtime dependency of the workspace package whose
 * code makes it, so `--omit=dev` can never leave a running process without a module.
 */
const ROOT = path.resolve(__dirname, '..');

export const ENTRIES: Record<string, string> = {
  api: 'apps/api/src/main.ts',
  admin: 'apps/api/src/admin.ts',
  worker: 'apps/worker/src/main.ts',
  scheduler: 'apps/scheduler/src/main.ts',
  migrate: 'packages/db/src/cli.ts',
};

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The workspace folder (apps/x or packages/x) a repository file belongs to. */
function workspaceOf(file: string): string | undefined {
  const match = /^(apps|packages)\/[^/]+/.exec(file);
  return match?.[0];
}

function manifest(workspace: string): Manifest {
  return JSON.parse(readFileSync(path.join(ROOT, workspace, 'package.json'), 'utf8')) as Manifest;
}

/** Problems: external imports of compiled code that its workspace does not declare as dependencies. */
export function undeclaredImports(metafile: Metafile): string[] {
  const problems = new Set<string>();
  for (const [file, input] of Object.entries(metafile.inputs)) {
    const workspace = workspaceOf(file);
    if (workspace && TEST_ONLY_PACKAGES.has(manifest(workspace).name)) problems.add(`${file} is test-only code in a built process`);
    for (const imported of input.imports) {
      if (!imported.external || builtins.has(imported.path)) continue;
      const name = packageOf(imported.path);
      if (!workspace) {
        problems.add(`${file} imports ${name} but is outside every workspace package`);
        continue;
      }
      const pkg = manifest(workspace);
      if (pkg.dependencies?.[name]) continue;
      if (DEV_ONLY_IMPORTS[name] && pkg.devDependencies?.[name]) continue;
      problems.add(`${file} imports ${name}: add it to "dependencies" of ${workspace}/package.json`);
    }
  }
  return [...problems].sort();
}

/** Builds every process of ENTRIES into `outdir` (emptied first) and checks its imports. */
export async function buildProcesses(outdir: string): Promise<{ outputs: Array<[string, number]>; problems: string[] }> {
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir,
    sourcemap: true,
    ...PROCESS_BUNDLE,
  });
  const outputs = Object.entries(result.metafile.outputs)
    .filter(([file]) => file.endsWith('.js'))
    .map(([file, output]): [string, number] => [file, output.bytes]);
  return { outputs, problems: undeclaredImports(result.metafile) };
}

async function main(): Promise<void> {
  const started = performance.now();
  const { outputs, problems } = await buildProcesses(path.join(ROOT, 'dist'));
  if (problems.length > 0) {
    console.error(`undeclared runtime dependencies:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  for (const [file, bytes] of outputs) console.log(`${file}  ${(bytes / 1024).toFixed(0)} KiB`);
  const consoleBuild = await ensureConsoleBuild();
  console.log(
    `apps/console/dist ${consoleBuild.built ? 'built' : 'up to date'}: initial JavaScript ${(consoleBuild.initialJsGzipBytes / 1024).toFixed(1)} KiB gzipped`,
  );
  console.log(`built in ${Math.round(performance.now() - started)} ms`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
