import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { undeclared } from '../../../scripts/check-deps';

/**
 * The workspace's package graph: every package declares what it imports (the check of
 * scripts/check-deps.ts), shipped code has no cycle between packages, no package reaches into
 * another's files, and only tests use the test harness (which sits on top of everything, apps
 * included, through their public entries).
 */
const ROOT = path.resolve(__dirname, '../../..');

interface Workspace {
  name: string;
  dir: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  /** The subpaths its package.json "exports" declares (`./api` → `@sdx/domain/api`), if any. */
  subpaths: string[];
}

const workspaces: Workspace[] = ['apps', 'packages'].flatMap((group) =>
  readdirSync(path.join(ROOT, group)).flatMap((entry) => {
    const dir = path.join(ROOT, group, entry);
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
      const subpaths = Object.keys(pkg.exports ?? {}).filter((key) => key.startsWith('./') && key !== './');
      return [{ name: pkg.name, dir, dependencies: pkg.dependencies ?? {}, devDependencies: pkg.devDependencies ?? {}, subpaths }];
    } catch {
      return [];
    }
  }),
);
const byName = new Map(workspaces.map((w) => [w.name, w]));

function sources(dir: string): string[] {
  let stat;
  try {
    stat = statSync(dir);
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return [];
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (entry === 'node_modules' || entry === 'dist') return [];
    if (statSync(full).isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry) && !entry.endsWith('.d.ts') ? [full] : [];
  });
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]).filter((s) => !s.startsWith('.') && !s.startsWith('node:'));
}

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

describe('workspace package graph', () => {
  it('declares in each package what its code imports (npm run check:deps)', () => {
    expect(undeclared()).toEqual([]);
  });

  /** An import of a package's root, or of a subpath its "exports" declares. */
  const isEntry = (specifier: string): boolean => {
    const name = packageOf(specifier);
    return specifier === name || byName.get(name)!.subpaths.includes(`.${specifier.slice(name.length)}`);
  };

  it("reaches into no other workspace package's files: imports go through package entries", () => {
    const deep = workspaces.flatMap((w) =>
      [...sources(path.join(w.dir, 'src')), ...sources(path.join(w.dir, 'test'))].flatMap((file) =>
        imports(file)
          .filter((s) => byName.has(packageOf(s)) && !isEntry(s))
          .map((s) => `${path.relative(ROOT, file)}: ${s}`),
      ),
    );
    expect(deep).toEqual([]);
  });

  it('has no cycle between the packages shipped code depends on', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, trail: string[]) => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') {
        cycles.push([...trail.slice(trail.indexOf(name)), name].join(' → '));
        return;
      }
      state.set(name, 'visiting');
      for (const dep of Object.keys(byName.get(name)!.dependencies)) if (byName.has(dep)) visit(dep, [...trail, name]);
      state.set(name, 'done');
    };
    for (const w of workspaces) visit(w.name, []);
    expect(cycles).toEqual([]);
  });

  it('keeps the test harness out of shipped code', () => {
    const users = workspaces.filter((w) => w.name !== '@sdx/testing' && '@sdx/testing' in w.dependencies).map((w) => w.name);
    expect(users).toEqual([]);
  });
});
