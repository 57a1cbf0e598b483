/**
 * No function of the service (src/, tests aside) is longer than 60 lines, so each part can be
 * read at once. A function's length runs from its first line to its closing brace; arrow
 * functions, function expressions, methods, constructors and accessors count, and an outer
 * function's lines include those of the functions inside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_LINES = 60;
const REPO = path.resolve(__dirname, '../..');
const ROOT = path.join(REPO, 'src');
const EXEMPT = new Set([
  // The in-page script: serialized into the page whole, so it cannot call module-level parts.
  'src/agent/observe/page-script.ts',
  // An HTML template: one page of markup and its inline script, read as a document.
  'src/api/live/view-page.ts',
]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** A file's path from the repository's root, as `src/…`, the way a reader finds it. */
const relative = (file: string): string => path.relative(REPO, file).split(path.sep).join('/');

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
      if (lines > MAX_LINES) found.push(`${relative(file)}:${first + 1} ${functionName(declaration)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

it(`has no function longer than ${MAX_LINES} lines in src/`, () => {
  const all = sourceFiles(ROOT);
  const exempt = all.filter((file) => EXEMPT.has(relative(file)));
  expect(exempt.map(relative).sort()).toEqual([...EXEMPT].sort());
  const files = all.filter((file) => !EXEMPT.has(relative(file)));
  expect(files.length).toBeGreaterThan(100);
  expect(files.flatMap(longFunctions)).toEqual([]);
});
