import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

/**
 * `npm run -s check:deps`: each workspace package declares what its code imports. An import in
 * src/ must be in the package's "dependencies" or, when it is type-only, in "devDependencies";
 * an import in test/, or in a test-only package, may be in either. bench/ and scripts/ use the repository's tools, declared
 * by the root or by any workspace package. What the built processes actually load is checked
 * more strictly by `npm run build` (runtime imports against "dependencies" only).
 */
const ROOT = path.resolve(__dirname, '..');

/**
 * Packages only tests load. Their own packages are devDependencies, so a production install
 * (`npm ci --omit=dev`, which installs every workspace's dependencies) leaves them out; no other
 * package may list them in "dependencies", and no built process may contain them.
 */
export const TEST_ONLY_PACKAGES = new Set(['@sdx/testing', '@sdx/fake-upstream', '@sdx/fake-stripe']);

/** Imports of src/ allowed from devDependencies: loaded lazily, never in production. */
export const DEV_ONLY_IMPORTS: Record<string, string> = {
  'pino-pretty': 'packages/config loads it only for a terminal outside production',
};
const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  workspaces?: string[];
}

const read = (file: string): Manifest => JSON.parse(readFileSync(file, 'utf8')) as Manifest;

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function tsFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry);
    if (entry === 'node_modules' || entry === 'dist') return [];
    if (statSync(full).isDirectory()) return tsFiles(full);
    return /\.tsx?$/.test(full) ? [full] : [];
  });
}

interface ImportRef {
  specifier: string;
  typeOnly: boolean;
}

/** Bare module specifiers of a file's imports, exports-from, require() and import() calls. */
export function importsOf(file: string): ImportRef[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: ImportRef[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = Boolean(
        clause && (clause.isTypeOnly || (!clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))),
      );
      out.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) {
        out.push({ specifier: node.arguments[0].text, typeOnly: false });
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((ref) => !ref.specifier.startsWith('.') && !builtins.has(ref.specifier));
}

export function undeclared(): string[] {
  const root = read(path.join(ROOT, 'package.json'));
  const workspaces = ['apps', 'packages'].flatMap((group) =>
    readdirSync(path.join(ROOT, group))
      .map((name) => path.join(group, name))
      .filter((dir) => statSync(path.join(ROOT, dir, 'package.json'), { throwIfNoEntry: false })),
  );
  const everywhere = new Set<string>(Object.keys({ ...root.dependencies, ...root.devDependencies }));
  const problems: string[] = [];
  for (const dir of workspaces) {
    const pkg = read(path.join(ROOT, dir, 'package.json'));
    everywhere.add(pkg.name);
    for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) everywhere.add(name);
    const testOnly = TEST_ONLY_PACKAGES.has(pkg.name);
    const runtime = new Set(Object.keys(pkg.dependencies ?? {}));
    const dev = new Set(Object.keys(pkg.devDependencies ?? {}));
    if (testOnly && runtime.size > 0)
      problems.push(`${dir}/package.json: a test-only package lists its packages in "devDependencies" only`);
    for (const name of runtime) {
      if (TEST_ONLY_PACKAGES.has(name)) problems.push(`${dir}/package.json: ${name} is test-only; list it in "devDependencies"`);
    }
    for (const [sub, isTest] of [
      ['src', false],
      ['test', true],
    ] as const) {
      for (const file of tsFiles(path.join(ROOT, dir, sub))) {
        const rel = path.relative(ROOT, file);
        for (const ref of importsOf(file)) {
          const name = packageOf(ref.specifier);
          if (name === pkg.name || runtime.has(name)) continue;
          if (dev.has(name) && (isTest || testOnly || ref.typeOnly || DEV_ONLY_IMPORTS[name])) continue;
          const where = dev.has(name) ? '"dependencies" (it is only in devDependencies)' : isTest ? '"devDependencies"' : '"dependencies"';
          problems.push(`${rel}: ${ref.specifier} is not declared; add ${name} to ${where} of ${dir}/package.json`);
        }
      }
    }
  }
  for (const dir of ['bench', 'scripts']) {
    for (const file of tsFiles(path.join(ROOT, dir))) {
      for (const ref of importsOf(file)) {
        const name = packageOf(ref.specifier);
        if (!everywhere.has(name)) problems.push(`${path.relative(ROOT, file)}: ${name} is declared by no package.json`);
      }
    }
  }
  return problems;
}

if (require.main === module) {
  const problems = undeclared();
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log('every workspace package declares its imports');
}
