import type { RecordedStep } from '../contracts/recording';
import { scriptOf } from './tools';
import { envName, fileEnvName, lit, locatorExpr, textExpr } from '../recording/playwright-code';

export { envName, locatorExpr };

/**
 * A recording as a runnable `@playwright/test` file. Every string from the recording comes
 * from pages and models, so literals are written with JSON.stringify and comments never carry
 * raw text. Secret placeholders (`<secret>name</secret>`) become reads of environment
 * variables (SECRET_<NAME>), and the script stops with a clear message when one is missing.
 */
export function playwrightScript(recording: { sessionId: string; taskId: string; steps: RecordedStep[] }): string {
  const steps = recording.steps.filter((s) => s.outcome === 'ok');
  const secrets = new Set<string>();
  const files = new Set<string>();
  const body: string[] = [];
  const first = steps.find((s) => s.urlBefore && /^https?:/.test(s.urlBefore));
  if (first) body.push(`await page.goto(${lit(first.urlBefore)});`);
  for (const s of steps) {
    const lines = stepCode(s, secrets, files);
    if (!lines.length) continue;
    body.push('', `// ${s.seq + 1}. ${commentSafe(describe(s))}`, ...lines);
    if (navigates(s)) body.push(`await page.waitForURL((url) => url.origin + url.pathname.replace(/\\/$/, '') === ${lit(documentOf(s.urlAfter))});`);
  }
  const envNames = [...secrets].map(envName);
  const fileNames = [...files].map(fileEnvName);
  return [
    `// Replays task ${commentSafe(recording.taskId)} of session ${commentSafe(recording.sessionId)}, as recorded by the browser agent service.`,
    `// Run it with @playwright/test (npx playwright test <this file>).`,
    envNames.length ? `// Secrets come from the environment: ${envNames.join(', ')}.` : '// The task typed no secrets.',
    ...(fileNames.length ? [`// Files to upload come from paths in the environment: ${fileNames.join(', ')}.`] : []),
    `import { test, type Page } from '@playwright/test';`,
    '',
    `/** A value from the environment; the script stops when it is missing. */`,
    `function env(name: string): string {`,
    `  const value = process.env[name];`,
    '  if (value === undefined || value === \'\') throw new Error(`Set the environment variable ${name} to run this script`);',
    `  return value;`,
    `}`,
    '',
    `async function tab(page: Page, index: number): Promise<Page> {`,
    `  const pages = page.context().pages();`,
    `  if (!pages[index]) throw new Error(\`There is no tab \${index}\`);`,
    `  await pages[index].bringToFront();`,
    `  return pages[index];`,
    `}`,
    '',
    `test(${lit(`replay of ${recording.taskId}`)}, async ({ page: first }) => {`,
    `  let page = first;`,
    `  void tab;`,
    ...envNames.map((n) => `  env(${lit(n)});`),
    ...body.map((l) => (l ? `  ${l}` : '')),
    `});`,
    '',
  ].join('\n');
}

/** Text safe inside a // comment: one line, no control characters. */
const commentSafe = (t: string) => t.replace(/[\u0000-\u001f\u2028\u2029]/g, ' ').slice(0, 200);

function describe(s: RecordedStep): string {
  const on = s.element ? ` ${s.element.role} "${s.element.name || s.element.text || s.element.label || ''}"` : '';
  return `${s.action}${on} (${s.by})`;
}

/** The address without query and fragment (and without a trailing slash). */
function documentOf(url: string): string {
  const u = new URL(url);
  return (u.origin + u.pathname).replace(/\/$/, '');
}

function navigates(s: RecordedStep): boolean {
  if (!s.urlAfter || !/^https?:/.test(s.urlAfter) || s.action === 'switch_tab') return false;
  try {
    const a = new URL(s.urlBefore);
    const b = new URL(s.urlAfter);
    return a.origin + a.pathname !== b.origin + b.pathname;
  } catch {
    return false;
  }
}

/** A recorded step as lines of the test, as its action's script writes them; none for an action not in the vocabulary. */
function stepCode(s: RecordedStep, secrets: Set<string>, files: Set<string>): string[] {
  const script = scriptOf(s.action);
  if (!script) return [];
  return script(s.args, {
    on: s.element ? locatorExpr(s.element) : undefined,
    text: (value) => textExpr(value, secrets),
    file: (fileId) => {
      files.add(fileId);
      return `env(${lit(fileEnvName(fileId))})`;
    },
  });
}
