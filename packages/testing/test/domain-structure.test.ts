import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { DOMAIN_LAYERS } from '@sdx/domain/testing';

/**
 * The domain's own shape (docs/architecture.md): no file over 400 lines; no import cycle
 * between its files, type imports included, so each module can be read from its imports down;
 * its folders in the layers of src/layers.ts, every import running down or within a layer
 * (type imports included), and no cycle between its folders (value imports).
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

interface Import {
  target: string;
  /** `import type`, `export type`, or an import whose every name is marked `type`: gone from the compiled code. */
  typeOnly: boolean;
}

function isTypeOnly(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** The domain files `file` imports or re-exports (type-only imports included, and marked). */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: Import[] = [];
  source.forEachChild((node) => {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node))) return;
    const spec = node.moduleSpecifier;
    if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) return;
    const target = path.resolve(path.dirname(file), spec.text);
    found.push({
      target: statSync(`${target}.ts`, { throwIfNoEntry: false }) ? `${target}.ts` : path.join(target, 'index.ts'),
      typeOnly: isTypeOnly(node),
    });
  });
  return found;
}

/** A file's unit: its folder of src/, or the file itself when it lies directly in src/. */
function unitOf(relative: string): string {
  return relative.split(path.sep)[0];
}

interface Arrow {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** The arrows that run up, from a unit of a lower layer to one of a higher layer. */
function upArrows(arrows: readonly Arrow[], layers: readonly { name: string; units: readonly string[] }[]): string[] {
  const layerOf = new Map(layers.flatMap((layer, rank) => layer.units.map((unit) => [unit, { rank, name: layer.name }] as const)));
  return arrows.flatMap(({ from, to, typeOnly }) => {
    const a = layerOf.get(unitOf(from));
    const b = layerOf.get(unitOf(to));
    if (!a || !b || a.rank >= b.rank) return [];
    return [`${from} (${a.name}) imports ${to} (${b.name})${typeOnly ? ', a type import' : ''}`];
  });
}

/** The graph of units by value imports (an arrow between files of different units). */
function unitGraph(arrows: readonly Arrow[]): Map<string, string[]> {
  const graph = new Map<string, Set<string>>();
  for (const { from, to, typeOnly } of arrows) {
    const a = unitOf(from);
    const b = unitOf(to);
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    if (!typeOnly && a !== b) graph.get(a)!.add(b);
  }
  return new Map([...graph].map(([unit, targets]) => [unit, [...targets]]));
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
  const arrows: Arrow[] = all.flatMap((file) =>
    importsOf(file).map(({ target, typeOnly }) => ({ from: rel(file), to: rel(target), typeOnly })),
  );

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = all
      .map((file) => ({ file: rel(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('has no import cycle between its files, type imports included', () => {
    const graph = new Map(all.map((file) => [file, importsOf(file).map((i) => i.target)]));
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

  it('declares the layer of each of its folders and top-level files once, in src/layers.ts', () => {
    const units = [...new Set(all.map((file) => unitOf(rel(file))))].sort();
    const declared = DOMAIN_LAYERS.flatMap((layer) => layer.units);
    expect([...declared].sort()).toEqual(units);
    expect(new Set(declared).size).toBe(declared.length);
  });

  it('has no import that runs up between layers, type imports included', () => {
    expect(upArrows(arrows, DOMAIN_LAYERS)).toEqual([]);
  });

  it('has no import cycle between its folders (value imports)', () => {
    expect(cyclesOf(unitGraph(arrows))).toEqual([]);
  });

  it('the layer check finds an import that runs up, and the folder check a cycle between folders', () => {
    const layers = [
      { name: 'low', units: ['credits', 'errors.ts'] },
      { name: 'high', units: ['jobs'] },
    ];
    const arrows: Arrow[] = [
      { from: 'jobs/state.ts', to: 'credits/balances.ts', typeOnly: false },
      { from: 'credits/balances.ts', to: 'errors.ts', typeOnly: false },
      { from: 'credits/postings.ts', to: 'jobs/recipe.ts', typeOnly: true },
    ];
    expect(upArrows(arrows, layers)).toEqual(['credits/postings.ts (low) imports jobs/recipe.ts (high), a type import']);
    expect(cyclesOf(unitGraph(arrows))).toEqual([]);
    const back = [...arrows, { from: 'credits/postings.ts', to: 'jobs/recipe.ts', typeOnly: false }];
    expect(cyclesOf(unitGraph(back))).toEqual([['credits', 'jobs']]);
  });

  it('the Services of context.ts are interfaces, none of them an implementation class', () => {
    const source = ts.createSourceFile('context.ts', readFileSync(path.join(DOMAIN, 'context.ts'), 'utf8'), ts.ScriptTarget.Latest);
    const valueImports = source.statements.filter((s) => ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly);
    expect(valueImports).toHaveLength(0);
    expect(source.statements.some((s) => ts.isClassDeclaration(s))).toBe(false);
  });
});
