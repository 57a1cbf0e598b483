/**
 * A tool carries every piece of its meaning (src/agent/types.ts AgentTool) and the registry
 * one tool per action of the list (ToolRegistry): a piece or a tool left out is a type error,
 * not a silent default. The fixtures (test/fixtures/tool-registry, outside the main
 * tsconfig) are compiled here with the project's compiler options: the complete ones clean,
 * each of the others with one error naming what it lacks.
 */
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURES = path.join(ROOT, 'test/fixtures/tool-registry');
const fixture = (name: string) => path.join(FIXTURES, `${name}.ts`);

const COMPLETE = ['complete-tool', 'complete-registry'];
const INCOMPLETE: [fixture: string, error: RegExp][] = [
  ['tool-without-policy-facts', /Property 'policyFacts' is missing/],
  ['tool-without-recording', /Property 'recording' is missing/],
  ['tool-without-playwright', /Property 'playwright' is missing/],
  ['registry-without-a-tool', /Property 'wait' is missing/],
  ['registry-with-a-misnamed-tool', /Type '"scroll"' is not assignable to type '"wait"'/],
];

function projectConfig(): ts.ParsedCommandLine {
  const file = path.join(ROOT, 'tsconfig.json');
  return ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, ROOT, undefined, file);
}

/** Each fixture's errors, as the compiler words them. */
const errors = new Map<string, string[]>();

// One program for all the fixtures; it type-checks src/agent/types.ts and what it imports (playwright-core's types among them), slow on a busy machine.
beforeAll(() => {
  const names = [...COMPLETE, ...INCOMPLETE.map(([name]) => name)];
  const program = ts.createProgram(names.map(fixture), { ...projectConfig().options, noEmit: true, types: [] });
  for (const name of names) {
    const source = program.getSourceFile(fixture(name));
    if (!source) throw new Error(`no fixture ${name}`);
    const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
    errors.set(name, diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')));
  }
}, 600_000);

it.each(COMPLETE)('%s, with every piece, compiles clean', (name) => {
  expect(errors.get(name)).toEqual([]);
});

it.each(INCOMPLETE)('%s does not compile, and says what it lacks', (name, error) => {
  const found = errors.get(name) ?? [];
  expect(found).toHaveLength(1);
  expect(found[0]).toMatch(error);
});

it('keeps the fixtures out of the main tsconfig', () => {
  const compiled = projectConfig().fileNames.map((file) => path.resolve(file));
  expect(compiled.filter((file) => file.startsWith(FIXTURES + path.sep))).toEqual([]);
  expect(compiled).toContain(path.join(ROOT, 'test/unit/tool-registry-types.test.ts'));
});
