/**
 * The previous release, as the migration-safety test and the upgrade drill take it:
 *
 * 1. `PREVIOUS_RELEASE`, when set: a version of CHANGELOG.md (`1.1.0` or `v1.1.0`), any revision
 *    git knows, or `all` (the last three releases of CHANGELOG.md before HEAD, newest first:
 *    `resolvePreviousReleases`);
 * 2. else the newest release of CHANGELOG.md before HEAD: each `## [x.y.z] - date` heading is
 *    followed by a line `Commit: <sha>` naming the commit released (`releasesOf`); the newest one
 *    that is an ancestor of HEAD (HEAD itself only when the working tree has changes on top of
 *    it). Git tags are optional: the changelog is the record;
 * 3. else the newest `v*` tag reachable from HEAD (likewise);
 * 4. else the parent of the newest commit that changed the migrations folder: the code that ran
 *    before the last schema change;
 * 5. else (a shallow clone, whose history stops at HEAD) HEAD itself, said so in `note`: the
 *    comparison then covers only uncommitted migrations. Fetch the history for the real one.
 *
 * Returns null outside a git checkout (see `workingTreeRelease`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { lastJsonLine, runNode } from './processes';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const MIGRATIONS_DIR = 'packages/db/src/migrations';

export interface PreviousRelease {
  /** What git was asked for (a tag, `<sha>^`, HEAD). */
  rev: string;
  sha: string;
  /** How it was chosen: 'env', 'changelog', 'tag', 'before-last-migration-change', 'head-shallow', or 'working-tree' outside git. */
  how: 'env' | 'changelog' | 'tag' | 'before-last-migration-change' | 'head-shallow' | 'working-tree';
  /** The version CHANGELOG.md gives the commit, when it names one. */
  version?: string;
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

/** A release named in CHANGELOG.md: its version and the commit it names. */
export interface ChangelogRelease {
  version: string;
  date: string;
  commit: string;
}

/**
 * The releases CHANGELOG.md names, newest first: each `## [x.y.z] - YYYY-MM-DD` heading whose
 * section has a line `Commit: <sha>` (backquotes allowed). A heading without one (a version
 * written before the commit was chosen) is skipped.
 */
export function releasesOf(changelog: string): ChangelogRelease[] {
  const out: ChangelogRelease[] = [];
  const sections = changelog.split(/^## /m).slice(1);
  for (const section of sections) {
    const heading = /^\[(\d+\.\d+\.\d+)\]\s*-\s*(\d{4}-\d{2}-\d{2})/.exec(section);
    const commit = /^Commit:\s*`?([0-9a-f]{7,40})`?/im.exec(section);
    if (heading && commit) out.push({ version: heading[1], date: heading[2], commit: commit[1] });
  }
  return out;
}

/** The releases of this checkout's CHANGELOG.md (the working tree's: a release being cut counts). */
export function changelogReleases(root: string = REPO_ROOT): ChangelogRelease[] {
  const file = path.join(root, 'CHANGELOG.md');
  return existsSync(file) ? releasesOf(readFileSync(file, 'utf8')) : [];
}

const isAncestor = (sha: string, head: string, root: string) => git(['merge-base', '--is-ancestor', sha, head], root) !== null;

/** The changelog's releases that git knows and that are HEAD's ancestors (HEAD itself only when `dirty`), newest first. */
function releasesBeforeHead(root: string, head: string, dirty: boolean): PreviousRelease[] {
  const out: PreviousRelease[] = [];
  for (const r of changelogReleases(root)) {
    const sha = commitOf(r.commit, root);
    if (!sha || (sha === head && !dirty) || !isAncestor(sha, head, root)) continue;
    out.push({
      rev: `v${r.version}`,
      sha,
      how: 'changelog',
      version: r.version,
      note: `previous release v${r.version} (${r.date}, CHANGELOG.md)`,
    });
  }
  return out;
}

/** A release asked for by name: a changelog version, else a revision git knows. */
function namedRelease(asked: string, root: string): PreviousRelease {
  const version = asked.replace(/^v/, '');
  const listed = changelogReleases(root).find((r) => r.version === version);
  if (listed) {
    const sha = commitOf(listed.commit, root);
    if (!sha)
      throw new Error(`PREVIOUS_RELEASE=${asked}: CHANGELOG.md names commit ${listed.commit}, which git does not know (fetch the history)`);
    return {
      rev: `v${listed.version}`,
      sha,
      how: 'env',
      version: listed.version,
      note: `previous release v${listed.version} (${listed.date}, PREVIOUS_RELEASE)`,
    };
  }
  const sha = commitOf(asked, root);
  if (!sha) throw new Error(`PREVIOUS_RELEASE=${asked}: neither a version of CHANGELOG.md nor a revision git knows`);
  const named = changelogReleases(root).find((r) => commitOf(r.commit, root) === sha);
  return {
    rev: asked,
    sha,
    how: 'env',
    ...(named ? { version: named.version } : {}),
    note: `previous release ${asked}${named ? ` (v${named.version})` : ''} (PREVIOUS_RELEASE)`,
  };
}

const headAndDirty = (root: string) => {
  const head = commitOf('HEAD', root);
  const dirty =
    (git(['status', '--porcelain', '--untracked-files=no'], root) ?? '') !== '' ||
    (git(['status', '--porcelain', '--', MIGRATIONS_DIR], root) ?? '') !== '';
  return { head, dirty };
};

/**
 * The releases to upgrade from: `PREVIOUS_RELEASE=all` gives the last `count` releases of
 * CHANGELOG.md before HEAD (newest first); anything else, the one `resolvePreviousRelease` picks.
 */
export function resolvePreviousReleases(root: string = REPO_ROOT, env: NodeJS.ProcessEnv = process.env, count = 3): PreviousRelease[] {
  if (env.PREVIOUS_RELEASE?.trim() !== 'all') {
    const one = resolvePreviousRelease(root, env);
    return one ? [one] : [];
  }
  if (git(['rev-parse', '--is-inside-work-tree'], root) !== 'true') throw new Error('PREVIOUS_RELEASE=all: not a git checkout');
  const { head, dirty } = headAndDirty(root);
  const releases = head ? releasesBeforeHead(root, head, dirty).slice(0, count) : [];
  if (releases.length === 0) throw new Error('PREVIOUS_RELEASE=all: CHANGELOG.md names no release before HEAD that git knows');
  return releases.map((r) => ({ ...r, how: 'env', note: `${r.note.replace('CHANGELOG.md', 'PREVIOUS_RELEASE=all')}` }));
}

export function resolvePreviousRelease(root: string = REPO_ROOT, env: NodeJS.ProcessEnv = process.env): PreviousRelease | null {
  if (git(['rev-parse', '--is-inside-work-tree'], root) !== 'true') return null;
  const { head, dirty } = headAndDirty(root);
  if (!head) return null;
  const asked = env.PREVIOUS_RELEASE?.trim();
  if (asked === 'all') throw new Error('PREVIOUS_RELEASE=all names several releases: take them with resolvePreviousReleases');
  if (asked) return namedRelease(asked, root);
  const fromChangelog = releasesBeforeHead(root, head, dirty)[0];
  if (fromChangelog) return fromChangelog;
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
        note: `no release in CHANGELOG.md and no v* tag: previous release taken as ${parent.slice(0, 12)}, the parent of ${lastChange.slice(0, 12)} (the newest commit that changed ${MIGRATIONS_DIR})`,
      };
    }
  }
  return {
    rev: 'HEAD',
    sha: head,
    how: 'head-shallow',
    note: `no release in CHANGELOG.md, no v* tag and no history before HEAD (a shallow clone?): previous release taken as HEAD ${head.slice(0, 12)}, so only uncommitted migrations are compared; fetch the history (git fetch --unshallow) for the real comparison`,
  };
}

/** Outside a git checkout there is no previous release: the checkout itself stands in for it, said so in `note`. */
export function workingTreeRelease(): PreviousRelease {
  return {
    rev: 'working tree',
    sha: '',
    how: 'working-tree',
    note: 'not a git checkout: no previous release to take, so this checkout stands in for it (a rolling restart, no new migration)',
  };
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
    const text = execFileSync('git', ['show', `${sha}:${MIGRATIONS_DIR}/${file}`], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
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

/** A release's files (any commit git knows), from `git archive` (nothing in the checkout or its .git changes). */
export function unpackRelease(sha: string, dir: string, root: string = REPO_ROOT): void {
  execFileSync('sh', ['-c', 'git archive --format=tar "$1" | tar -x -C "$2"', 'sh', sha, dir], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/**
 * `npm ci` in the release's folder, or (install: 'link') a node_modules of links: every package
 * of this checkout's, but the workspace's own (`@sdx/*`), which point at the release's sources.
 */
export function installRelease(dir: string, install: 'ci' | 'link', root: string = REPO_ROOT): void {
  if (install === 'ci') {
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 15 * 60_000,
    });
    return;
  }
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, '@sdx'), { recursive: true });
  const ours = new Map<string, string>();
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(path.join(dir, group))) {
      const manifest = path.join(dir, group, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (pkg.name?.startsWith('@sdx/')) ours.set(pkg.name, path.join(dir, group, name));
      // A workspace's own node_modules (versions it alone needs), from this checkout's.
      const nested = path.join(root, group, name, 'node_modules');
      if (existsSync(nested) && !existsSync(path.join(dir, group, name, 'node_modules')))
        symlinkSync(nested, path.join(dir, group, name, 'node_modules'), 'dir');
    }
  }
  for (const [name, target] of ours) symlinkSync(target, path.join(modules, name), 'dir');
  for (const entry of readdirSync(path.join(root, 'node_modules'))) {
    if (entry === '@sdx' || entry === '.package-lock.json') continue;
    symlinkSync(path.join(root, 'node_modules', entry), path.join(modules, entry));
  }
}

/**
 * A release's database, as its operator sets it up: the schema by its own migrate command, then
 * a workspace (ample credits and limits) and its key by its admin CLI. `env` holds DATABASE_URL.
 */
export function setUpReleaseDatabase(dir: string, env: Record<string, string>, name: string): { workspaceId: string; apiKey: string } {
  runNode(dir, ['packages/db/src/cli.ts'], env);
  const created = lastJsonLine<{ workspace_id?: string; api_key?: string }>(
    runNode(
      dir,
      [
        'apps/api/src/admin.ts',
        'create-workspace',
        '--name',
        name,
        '--credits',
        '100000000',
        '--rate-limit',
        '1000000',
        '--max-active-jobs',
        '1000000',
        '--json',
      ],
      env,
    ),
  );
  const { workspace_id: workspaceId, api_key: apiKey } = created;
  if (!workspaceId || !apiKey) throw new Error(`the release's admin CLI answered no workspace and key: ${JSON.stringify(created)}`);
  return { workspaceId, apiKey };
}

/** A counter the upgrade's contract step found differing from the ledger, and what it set it to. */
export interface CounterFix {
  workspace_id: string;
  counter: string;
  key_id?: string;
  was: number;
  now: number;
}

/**
 * The upgrade's contract step, by this checkout's admin CLI as an operator runs it once every
 * process runs the new release: `npm run admin -- reconcile-counters` (the money's counters
 * recomputed from the reservations and the ledger). `env` holds DATABASE_URL.
 */
export function reconcileCounters(env: Record<string, string>): { workspaces: number; fixes: CounterFix[] } {
  return lastJsonLine(runNode(REPO_ROOT, ['apps/api/src/admin.ts', 'reconcile-counters', '--json'], env));
}
