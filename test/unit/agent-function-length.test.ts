/**
 * No function of the agent (src/agent, tests aside) is longer than 60 lines, so each part
 * can be read at once. The in-page script is exempt: it is serialized into the page whole.
 * A function's length runs from its first line to its closing brace; arrow functions,
 * function expressions, methods, constructors and accessors count.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_LINES = 60;
const ROOT = path.resolve(__dirname, '../../src/agent');
const EXEMPT = new Set(['observe/page-script.ts']);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

function functionName(node: ts.FunctionLikeDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

function longFunctions(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const declaration = node as ts.FunctionLikeDeclaration;
      const first = source.getLineAndCharacterOfPosition(declaration.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(declaration.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_LINES) found.push(`${path.relative(ROOT, file)}:${first + 1} ${functionName(declaration)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it(`has no function longer than ${MAX_LINES} lines in src/agent`, () => {
  const files = sourceFiles(ROOT).filter((file) => !EXEMPT.has(path.relative(ROOT, file).split(path.sep).join('/')));
  expect(files.length).toBeGreaterThan(10);
  expect(files.flatMap(longFunctions)).toEqual([]);
});
