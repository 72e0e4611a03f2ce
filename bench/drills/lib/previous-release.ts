/**
 * The previous release, as the migration-safety test and the upgrade drill take it from git:
 *
 * 1. `PREVIOUS_RELEASE` (any revision git knows), when set;
 * 2. else the newest `v*` tag reachable from HEAD (not HEAD itself, unless the working tree has
 *    changes on top of it);
 * 3. else (no tag yet) the parent of the newest commit that changed the migrations folder: the
 *    code that ran before the last schema change;
 * 4. else (a shallow clone, whose history stops at HEAD) HEAD itself, said so in `note`: the
 *    comparison then covers only uncommitted migrations. Fetch the tags (or the history) for
 *    the real one.
 *
 * Returns null outside a git checkout (see `workingTreeRelease`).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const MIGRATIONS_DIR = 'packages/db/src/migrations';

export interface PreviousRelease {
  /** What git was asked for (a tag, `<sha>^`, HEAD). */
  rev: string;
  sha: string;
  /** How it was chosen: 'env', 'tag', 'before-last-migration-change', 'head-shallow', or 'working-tree' outside git. */
  how: 'env' | 'tag' | 'before-last-migration-change' | 'head-shallow' | 'working-tree';
  note: string;
}

function git(args: string[], root: string): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const commitOf = (rev: string, root: string) => git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], root);

export function resolvePreviousRelease(root: string = REPO_ROOT, env: NodeJS.ProcessEnv = process.env): PreviousRelease | null {
  if (git(['rev-parse', '--is-inside-work-tree'], root) !== 'true') return null;
  const head = commitOf('HEAD', root);
  if (!head) return null;
  const asked = env.PREVIOUS_RELEASE?.trim();
  if (asked) {
    const sha = commitOf(asked, root);
    if (!sha) throw new Error(`PREVIOUS_RELEASE=${asked}: git does not know this revision`);
    return { rev: asked, sha, how: 'env', note: `previous release ${asked} (PREVIOUS_RELEASE)` };
  }
  const dirty = (git(['status', '--porcelain', '--untracked-files=no'], root) ?? '') !== '' || (git(['status', '--porcelain', '--', MIGRATIONS_DIR], root) ?? '') !== '';
  const tags = (git(['tag', '--list', 'v*', '--merged', 'HEAD', '--sort=-v:refname'], root) ?? '').split('\n').filter(Boolean);
  for (const tag of tags) {
    const sha = commitOf(tag, root);
    if (sha && (sha !== head || dirty)) return { rev: tag, sha, how: 'tag', note: `previous release ${tag}` };
  }
  const lastChange = git(['log', '-1', '--format=%H', '--', MIGRATIONS_DIR], root);
  if (lastChange) {
    const parent = commitOf(`${lastChange}^`, root);
    if (parent) {
      return {
        rev: `${lastChange.slice(0, 12)}^`,
        sha: parent,
        how: 'before-last-migration-change',
        note: `no v* tag: previous release taken as ${parent.slice(0, 12)}, the parent of ${lastChange.slice(0, 12)} (the newest commit that changed ${MIGRATIONS_DIR})`,
      };
    }
  }
  return {
    rev: 'HEAD',
    sha: head,
    how: 'head-shallow',
    note: `no v* tag and no history before HEAD (a shallow clone?): previous release taken as HEAD ${head.slice(0, 12)}, so only uncommitted migrations are compared; fetch the tags or the history (git fetch --tags --unshallow) for the real comparison`,
  };
}

/** Outside a git checkout there is no previous release: the checkout itself stands in for it, said so in `note`. */
export function workingTreeRelease(): PreviousRelease {
  return { rev: 'working tree', sha: '', how: 'working-tree', note: 'not a git checkout: no previous release to take, so this checkout stands in for it (a rolling restart, no new migration)' };
}

/** The migration files of `sha` (their names without `.ts`, in order). */
export function migrationFilesAt(sha: string, root: string = REPO_ROOT): string[] {
  const listed = git(['ls-tree', '--name-only', `${sha}:${MIGRATIONS_DIR}`], root);
  if (listed === null) throw new Error(`git ls-tree ${sha}:${MIGRATIONS_DIR} failed`);
  return listed
    .split('\n')
    .filter((name) => /^\d{8}_\d{4}_.+\.ts$/.test(name))
    .sort();
}

/**
 * Writes the migrations of `sha` (from `git show`) and a runner beside them into `dir`, with a
 * `node_modules` link to this checkout's so their imports resolve. Returns the migration names.
 */
export function exportMigrations(sha: string, dir: string, root: string = REPO_ROOT): string[] {
  mkdirSync(path.join(dir, 'migrations'), { recursive: true });
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const files = migrationFilesAt(sha, root);
  for (const file of files) {
    const text = execFileSync('git', ['show', `${sha}:${MIGRATIONS_DIR}/${file}`], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    writeFileSync(path.join(dir, 'migrations', file), text);
  }
  const names = files.map((f) => f.replace(/\.ts$/, ''));
  const runner = [
    "import { Kysely, Migrator, PostgresDialect } from 'kysely';",
    "import pg from 'pg';",
    ...names.map((name, i) => `import * as m${i} from './migrations/${name}';`),
    `const migrations = { ${names.map((name, i) => `'${name}': m${i}`).join(', ')} };`,
    'async function main(): Promise<void> {',
    '  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 }) }) });',
    '  try {',
    '    const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();',
    '    if (error) throw error;',
    '  } finally {',
    '    await db.destroy();',
    '  }',
    '}',
    'main().catch((error: unknown) => { console.error(error); process.exit(1); });',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'run.ts'), runner);
  return names;
}

/** Runs the migrations `exportMigrations` wrote into `dir` against `databaseUrl`, in a child process. */
export function runExportedMigrations(dir: string, databaseUrl: string, env: Record<string, string> = {}): void {
  execFileSync(process.execPath, ['--import', 'tsx', 'run.ts'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', ...env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}
