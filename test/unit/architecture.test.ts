/**
 * The floors of the house (docs/architecture.md), checked on every import of src/:
 * contracts at the bottom import nothing of the service's; the store imports only contracts
 * and the process basics; nothing but the entry point imports the API; workflow code imports
 * only workflow code and contracts; and no module imports itself through others.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as ts from 'typescript';
import { findCycles, folderOf, readImportGraph, violations, type ImportGraph, type ImportRule } from '../support/import-graph';

const BASICS = new Set(['config', 'logger', 'at-most']);
const under = (folder: string) => (module: string) => folderOf(module) === folder;
const anyOf = (...tests: ((module: string) => boolean)[]) => (module: string) => tests.some((t) => t(module));
const basics = (module: string) => BASICS.has(module);

const RULES: ImportRule[] = [
  { name: 'contracts import nothing of the service', applies: under('contracts'), allows: under('contracts') },
  { name: 'the store imports only contracts and the basics', applies: under('store'), allows: anyOf(under('store'), under('contracts'), basics) },
  { name: 'only the entry point imports the API', applies: (m: string) => folderOf(m) !== 'api' && m !== 'main', allows: (m: string) => folderOf(m) !== 'api' },
  { name: 'workflow code imports only workflows, contracts and the types of activities', applies: under('workflows'), allows: anyOf(under('workflows'), under('contracts')), allowsTypesOf: under('activities') },
  { name: 'the agent imports no Temporal code (workflows, activities, workers)', applies: under('agent'), allows: (m: string) => !['workflows', 'activities', 'workers', 'temporal'].includes(folderOf(m)) },
  { name: 'the basics import only contracts', applies: basics, allows: anyOf(basics, under('contracts')) },
];

const graph = readImportGraph(path.resolve(__dirname, '../../src'));

describe('the import rules', () => {
  it.each(RULES.map((rule) => [rule.name, rule] as const))('%s', (_name, rule) => {
    const found = violations(graph, [rule]).map((v) => `${v.from} → ${v.to}`);
    expect(found).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('no module reads process.env but config.ts', () => {
    const readers: string[] = [];
    const srcRoot = path.resolve(__dirname, '../../src');
    for (const module of graph.edges.keys()) {
      if (module === 'config') continue;
      const file = path.join(srcRoot, `${module}.ts`);
      const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && ts.isIdentifier(node.expression) && node.expression.text === 'process') readers.push(module);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(readers).toEqual([]);
  });

  it('the process entry point is src/main.ts', () => {
    expect(graph.edges.has('main')).toBe(true);
  });
});

describe('the checker itself', () => {
  const sample = (edges: Record<string, string[]>): ImportGraph => ({ edges: new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)])) });

  it('sees an upward import', () => {
    const found = violations(sample({ 'store/a': ['agent/b'], 'agent/b': ['store/a'] }), RULES);
    expect(found).toEqual([{ from: 'store/a', to: 'agent/b', rule: 'the store imports only contracts and the basics' }]);
  });

  it('sees a cycle of three modules and none in a chain', () => {
    expect(findCycles(sample({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c']]);
    expect(findCycles(sample({ a: ['b'], b: ['c'], c: [] }))).toEqual([]);
  });

  it('reads real imports, type-only ones included and marked', () => {
    const real = readImportGraph(path.resolve(__dirname, '../fixtures/import-graph'));
    expect([...(real.edges.get('store/repo') ?? [])].sort()).toEqual(['agent/thing', 'contracts/types']);
    expect([...(real.typeOnly?.get('store/repo') ?? [])]).toEqual(['agent/thing']);
  });

  it('lets workflow code import the types of activities but not their code', () => {
    const graph: ImportGraph = { ...sample({ 'workflows/w': ['activities/a', 'activities/b'] }), typeOnly: new Map([['workflows/w', new Set(['activities/a'])]]) };
    expect(violations(graph, RULES).map((v) => v.to)).toEqual(['activities/b']);
  });
});
