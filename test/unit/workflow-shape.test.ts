/**
 * The workflows (src/workflows, tests aside) stay readable and typed: no function longer
 * than 60 lines, no `as` cast (`as const` aside) and no non-null assertion (`x!`). A
 * function's length runs from its first line to its closing brace; arrow functions,
 * function expressions, methods, constructors and accessors count.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MAX_LINES = 60;
const ROOT = path.resolve(__dirname, '../../src/workflows');

const files = fs
  .readdirSync(ROOT)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => ts.createSourceFile(name, fs.readFileSync(path.join(ROOT, name), 'utf8'), ts.ScriptTarget.ES2022, true));

/** Every node of the workflow files that `pick` describes, as `file:line description`. */
function findings(pick: (node: ts.Node, source: ts.SourceFile) => string | undefined): string[] {
  return files.flatMap((source) => {
    const found: string[] = [];
    const visit = (node: ts.Node): void => {
      const what = pick(node, source);
      if (what) found.push(`${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${what}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
    return found;
  });
}

it('reads the workflow files', () => {
  expect(files.map((f) => f.fileName)).toEqual(expect.arrayContaining(['session.workflow.ts', 'task-loop.ts', 'browser-lease.ts', 'handlers.ts']));
});

it(`has no function longer than ${MAX_LINES} lines in src/workflows`, () => {
  const long = findings((node, source) => {
    if (!ts.isFunctionLike(node) || !('body' in node) || !node.body) return undefined;
    const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
    const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
    return lines > MAX_LINES ? `${lines} lines` : undefined;
  });
  expect(long).toEqual([]);
});

it('has no `as` cast and no non-null assertion in src/workflows', () => {
  const unchecked = findings((node, source) => {
    if (ts.isAsExpression(node) && node.type.getText(source) !== 'const') return `cast: ${node.getText(source)}`;
    if (ts.isNonNullExpression(node)) return `non-null assertion: ${node.getText(source)}`;
    return undefined;
  });
  expect(unchecked).toEqual([]);
});
