import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The domain's own shape (docs/architecture.md): no file over 400 lines, and no import cycle
 * between its files, type imports included, so each module can be read from its imports down.
 */
const DOMAIN = path.resolve(__dirname, '../../domain/src');
const MAX_LINES = 400;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return files(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** The domain files `file` imports or re-exports (type-only imports included). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: string[] = [];
  source.forEachChild((node) => {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node))) return;
    const spec = node.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) return;
    const target = path.resolve(path.dirname(file), spec.text);
    found.push(statSync(`${target}.ts`, { throwIfNoEntry: false }) ? `${target}.ts` : path.join(target, 'index.ts'));
  });
  return found;
}

/** The strongly connected components of more than one file (Tarjan), or of one file importing itself. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('packages/domain', () => {
  const all = files(DOMAIN);
  const rel = (file: string) => path.relative(DOMAIN, file);

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = all.map((file) => ({ file: rel(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 })).filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('has no import cycle between its files, type imports included', () => {
    const graph = new Map(all.map((file) => [file, importsOf(file)]));
    expect(cyclesOf(graph).map((component) => component.map(rel))).toEqual([]);
  });

  it('the cycle check finds a cycle through a type import', () => {
    const graph = new Map([
      ['context.ts', ['admit.ts']],
      ['admit.ts', ['state.ts']],
      ['state.ts', ['context.ts']],
      ['leaf.ts', []],
    ]);
    expect(cyclesOf(graph)).toEqual([['admit.ts', 'context.ts', 'state.ts']]);
    expect(cyclesOf(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
  });

  it('the Services of context.ts are interfaces, none of them an implementation class', () => {
    const source = ts.createSourceFile('context.ts', readFileSync(path.join(DOMAIN, 'context.ts'), 'utf8'), ts.ScriptTarget.Latest);
    const valueImports = source.statements.filter((s) => ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly);
    expect(valueImports).toHaveLength(0);
    expect(source.statements.some((s) => ts.isClassDeclaration(s))).toBe(false);
  });
});
