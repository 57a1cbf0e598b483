/**
 * The floors of the house (docs/architecture.md), checked on every import of src/: each
 * folder imports only the floors below its own; contracts at the bottom import nothing of the
 * service's; the store imports only contracts and the process basics; nothing but the entry
 * point imports the API; workflow code imports only workflow code and contracts (and the
 * types of activities); no two folders import each other; and no module imports itself
 * through others.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as ts from 'typescript';
import { findCycles, folderGraph, folderOf, readImportGraph, twoWayPairs, violations, type ImportGraph, type ImportRule } from '../support/import-graph';

const BASICS = new Set(['config', 'logger', 'at-most']);
/** A module's place in the floors: its folder, or for a top-level file the entry point (`main`) or the basics. */
const unitOf = (module: string): string => {
  const folder = folderOf(module);
  if (folder !== '.') return folder;
  return module === 'main' ? 'main' : 'basics';
};

/** The floors, top to bottom: each folder imports only folders on the floors below its own. */
const FLOORS: string[][] = [
  ['main'],
  ['api', 'cli', 'workers'],
  ['workflows'],
  ['activities'],
  ['held-sessions', 'triggers'],
  ['sessions'],
  ['agent', 'environments'],
  ['recording', 'webhooks'],
  ['browser', 'events'],
  ['store', 'files', 'net', 'profiles', 'metrics', 'model', 'temporal'],
  ['basics'],
  ['contracts'],
];
const floorOf = (unit: string): number => FLOORS.findIndex((floor) => floor.includes(unit));

const under = (folder: string) => (module: string) => folderOf(module) === folder;
const anyOf = (...tests: ((module: string) => boolean)[]) => (module: string) => tests.some((t) => t(module));
const basics = (module: string) => BASICS.has(module);

/** One rule a folder: what it may import is what lies on the floors below it. */
const FLOOR_RULES: ImportRule[] = FLOORS.flat().map((unit) => ({
  name: `${unit} imports only the floors below it`,
  applies: (m: string) => unitOf(m) === unit,
  allows: (m: string) => unitOf(m) === unit || floorOf(unitOf(m)) > floorOf(unit),
}));

const RULES: ImportRule[] = [
  ...FLOOR_RULES,
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

  it('has every folder of src/ on a floor', () => {
    const folders = [...new Set([...graph.edges.keys()].map(unitOf))].sort();
    expect(folders.filter((unit) => floorOf(unit) < 0)).toEqual([]);
  });

  it('has no two folders that import each other', () => {
    expect(twoWayPairs(folderGraph(graph, unitOf))).toEqual([]);
  });

  it('has no ring of folders', () => {
    expect(findCycles(folderGraph(graph, unitOf))).toEqual([]);
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
    expect(found).toEqual([
      { from: 'store/a', to: 'agent/b', rule: 'store imports only the floors below it' },
      { from: 'store/a', to: 'agent/b', rule: 'the store imports only contracts and the basics' },
    ]);
  });

  it('sees a folder that imports one above it, and a folder on no floor', () => {
    const found = violations(sample({ 'browser/a': ['agent/b'], 'agent/b': ['browser/a'] }), FLOOR_RULES);
    expect(found).toEqual([{ from: 'browser/a', to: 'agent/b', rule: 'browser imports only the floors below it' }]);
    expect(floorOf('nowhere')).toBe(-1);
  });

  it('sees two folders that import each other, type imports included', () => {
    const graph: ImportGraph = { ...sample({ 'agent/a': ['recording/r'], 'recording/r': ['agent/b'], 'agent/b': [] }), typeOnly: new Map([['recording/r', new Set(['agent/b'])]]) };
    expect(twoWayPairs(folderGraph(graph, unitOf))).toEqual([['agent', 'recording']]);
    expect(twoWayPairs(folderGraph(sample({ 'agent/a': ['recording/r'], 'recording/r': [] }), unitOf))).toEqual([]);
  });

  it('takes main.ts for the entry point and the other top-level files for the basics', () => {
    expect([unitOf('main'), unitOf('config'), unitOf('store/x')]).toEqual(['main', 'basics', 'store']);
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
