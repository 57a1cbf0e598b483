/**
 * The import graph of src/, read with the TypeScript compiler's pre-processor (imports and
 * re-exports, type-only ones included: a type import is a dependency of the design too).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

export interface ImportGraph {
  /** module path relative to src/, without extension → the modules it imports */
  edges: Map<string, Set<string>>;
  /** the imports of a module that bring in types only (`import type`, or every name marked `type`): erased when compiled */
  typeOnly?: Map<string, Set<string>>;
}

function listSources(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) listSources(full, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

function resolveLocal(fromFile: string, spec: string, srcRoot: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), spec);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return path.relative(srcRoot, candidate).replace(/\.ts$/, '');
  }
  const stripped = base.replace(/\.js$/, '.ts');
  if (fs.existsSync(stripped)) return path.relative(srcRoot, stripped).replace(/\.ts$/, '');
  return undefined;
}

/** The modules one file imports, each with whether all its imports of it are type-only. */
function importsOf(file: string): Map<string, boolean> {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = new Map<string, boolean>();
  const add = (spec: string, typeOnly: boolean) => found.set(spec, (found.get(spec) ?? true) && typeOnly);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const namedTypes = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) && !clause.name && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier.text, Boolean(clause?.isTypeOnly || namedTypes));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function readImportGraph(srcRoot: string): ImportGraph {
  const edges = new Map<string, Set<string>>();
  const typeOnly = new Map<string, Set<string>>();
  for (const file of listSources(srcRoot)) {
    const from = path.relative(srcRoot, file).replace(/\.ts$/, '');
    const targets = new Set<string>();
    const types = new Set<string>();
    for (const [spec, onlyTypes] of importsOf(file)) {
      const to = resolveLocal(file, spec, srcRoot);
      if (!to || to === from) continue;
      targets.add(to);
      if (onlyTypes) types.add(to);
    }
    edges.set(from, targets);
    typeOnly.set(from, types);
  }
  return { edges, typeOnly };
}

/** The folder a module belongs to: its first path segment ("agent", "api", …), or "." for a top-level file. */
export function folderOf(module: string): string {
  const slash = module.indexOf('/');
  return slash < 0 ? '.' : module.slice(0, slash);
}

/** Every elementary cycle found by a depth-first search, each reported once (as the strongly connected components with more than one member, or a self-loop). */
export function findCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    indexes.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.edges.get(node) ?? []) {
      if (!indexes.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexes.get(next)!));
      }
    }
    if (low.get(node) === indexes.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of graph.edges.keys()) if (!indexes.has(node)) visit(node);
  return components;
}

/** The graph of folders: an edge wherever a module of one imports a module of another (`unitOf` names a module's folder), type-only where every such import is. */
export function folderGraph(graph: ImportGraph, unitOf: (module: string) => string = folderOf): ImportGraph {
  const edges = new Map<string, Set<string>>();
  const code = new Map<string, Set<string>>();
  for (const [from, targets] of graph.edges) {
    const a = unitOf(from);
    if (!edges.has(a)) edges.set(a, new Set());
    if (!code.has(a)) code.set(a, new Set());
    for (const to of targets) {
      const b = unitOf(to);
      if (a === b) continue;
      edges.get(a)!.add(b);
      if (!(graph.typeOnly?.get(from)?.has(to) ?? false)) code.get(a)!.add(b);
    }
  }
  const typeOnly = new Map([...edges].map(([a, targets]) => [a, new Set([...targets].filter((b) => !code.get(a)!.has(b)))]));
  return { edges, typeOnly };
}

/** Pairs of nodes that import each other (each pair once, its names in order). */
export function twoWayPairs(graph: ImportGraph): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [a, targets] of graph.edges) {
    for (const b of targets) if (a < b && graph.edges.get(b)?.has(a)) pairs.push([a, b]);
  }
  return pairs.sort((x, y) => x.join().localeCompare(y.join()));
}

export interface Violation {
  from: string;
  to: string;
  rule: string;
}

/** Imports that break one of the given rules. */
export interface ImportRule {
  name: string;
  applies: (from: string) => boolean;
  allows: (to: string) => boolean;
  /** modules it may import types of (erased at compile time) though not their code */
  allowsTypesOf?: (to: string) => boolean;
}

export function violations(graph: ImportGraph, rules: ImportRule[]): Violation[] {
  const found: Violation[] = [];
  for (const [from, targets] of graph.edges) {
    for (const to of targets) {
      const typesOnly = graph.typeOnly?.get(from)?.has(to) ?? false;
      for (const rule of rules) {
        if (!rule.applies(from) || rule.allows(to) || (typesOnly && rule.allowsTypesOf?.(to))) continue;
        found.push({ from, to, rule: rule.name });
      }
    }
  }
  return found;
}
