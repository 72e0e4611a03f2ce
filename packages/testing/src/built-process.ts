import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { PROCESS_BUNDLE } from '../../../scripts/bundle';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Where the bundles of an entry are kept: in the node_modules of its workspace package (of the
 * repository outside one), so their imports resolve to the packages its sources import.
 */
function cacheOf(entry: string): string {
  const workspace = /^(apps|packages)\/[^/]+/.exec(entry)?.[0] ?? '';
  return path.join(ROOT, workspace, 'node_modules', '.cache', 'sdx-built-processes');
}

interface Built {
  /** The bundle, in the entry's cache folder. */
  bundle: string;
  /** Each source compiled into it (relative to ROOT) and the digest of its bytes. */
  inputs: Record<string, string>;
}

function digestOf(file: string): string | null {
  try {
    return createHash('sha256')
      .update(readFileSync(path.join(ROOT, file)))
      .digest('hex');
  } catch {
    return null;
  }
}

function upToDate(cache: string, record: string): string | null {
  try {
    const built = JSON.parse(readFileSync(record, 'utf8')) as Built;
    const bundle = path.join(cache, built.bundle);
    if (!existsSync(bundle)) return null;
    for (const [file, digest] of Object.entries(built.inputs)) if (digestOf(file) !== digest) return null;
    return bundle;
  } catch {
    return null;
  }
}

async function buildEntry(entry: string): Promise<string> {
  const cache = cacheOf(entry);
  const name = path.basename(entry, '.ts');
  const record = path.join(cache, `${name}.json`);
  const current = upToDate(cache, record);
  if (current) return current;
  mkdirSync(cache, { recursive: true });
  const partial = path.join(cache, `${name}.${process.pid}.${Date.now()}.tmp.js`);
  // As `npm run build` compiles dist/ (scripts/bundle.ts).
  const result = await build({ ...PROCESS_BUNDLE, absWorkingDir: ROOT, entryPoints: [entry], outfile: partial });
  const inputs: Record<string, string> = {};
  for (const file of Object.keys(result.metafile.inputs).sort()) inputs[file] = digestOf(file) ?? '';
  const key = createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
  const bundle = `${name}-${key}.js`;
  renameSync(partial, path.join(cache, bundle));
  const partialRecord = `${record}.${process.pid}.tmp`;
  writeFileSync(partialRecord, JSON.stringify({ bundle, inputs } satisfies Built));
  renameSync(partialRecord, record);
  return path.join(cache, bundle);
}

const building = new Map<string, Promise<string>>();

/**
 * A process of the service (an entry of scripts/build.ts, e.g. apps/api/src/admin.ts, or the
 * CLI's apps/cli/src/main.ts) compiled into one file that plain `node` runs, as `npm run build`
 * makes dist/admin.js: the workspace's packages compiled in (@sdx/sdk from its source, by
 * tsconfig's paths), a start without tsx compiling the sources on every run. Kept in
 * node_modules/.cache under the digest of its sources and built again when one changes.
 */
export function builtProcess(entry: string): Promise<string> {
  let pending = building.get(entry);
  if (!pending) {
    pending = buildEntry(entry);
    building.set(entry, pending);
    pending.catch(() => building.delete(entry));
  }
  return pending;
}

const run = promisify(execFile);

/**
 * Runs the admin CLI (apps/api/src/admin.ts, built as dist/admin.js) with `args`, as
 * `npm run -s admin -- ...args` does; rejects as execFile does on a non-zero exit (with its
 * code, stdout and stderr). Its output is kept whole up to 64 MiB (an export-workspace).
 */
export async function runAdmin(args: string[], env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  const admin = await builtProcess('apps/api/src/admin.ts');
  return run(process.execPath, [admin, ...args], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
}
