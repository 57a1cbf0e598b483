import { ARIA_ROLES, type ElementDescription, type RecordedStep } from '../contracts/recording';

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

/** SECRET_<NAME>: the placeholder's name upper-cased, anything else than letters and digits as _. */
export function envName(secret: string): string {
  return `SECRET_${secret.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

function fileEnvName(fileId: string): string {
  return `FILE_${fileId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

const lit = (v: unknown) => JSON.stringify(v);
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

const PLACEHOLDER = /<secret>([A-Za-z][A-Za-z0-9_.-]{0,63})<\/secret>/g;

/** A typed text as a TypeScript expression: a plain literal, or a template reading the secrets it names. */
function textExpr(text: string, secrets: Set<string>): string {
  if (!PLACEHOLDER.test(text)) return lit(text);
  PLACEHOLDER.lastIndex = 0;
  const parts: string[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index! > last) parts.push(lit(text.slice(last, m.index)));
    secrets.add(m[1]);
    parts.push(`env(${lit(envName(m[1]))})`);
    last = m.index! + m[0].length;
  }
  if (last < text.length) parts.push(lit(text.slice(last)));
  return parts.join(' + ');
}


/** The most telling locator of an element: role and name, label, placeholder, test id, text, the CSS path. */
export function locatorExpr(el: ElementDescription): string {
  const root = el.frame ? `page.frameLocator(${lit(el.frame.name ? `iframe[name=${JSON.stringify(el.frame.name)}]` : `iframe[src=${JSON.stringify(el.frame.url)}]`)})` : 'page';
  if (el.testId) return `${root}.getByTestId(${lit(el.testId)})`;
  if (el.name && ARIA_ROLES.has(el.role)) return `${root}.getByRole(${lit(el.role)}, { name: ${lit(el.name)}, exact: true })`;
  if (el.label) return `${root}.getByLabel(${lit(el.label)}, { exact: true })`;
  if (el.placeholder) return `${root}.getByPlaceholder(${lit(el.placeholder)}, { exact: true })`;
  if (el.id) return `${root}.locator(${lit(`[id=${JSON.stringify(el.id)}]`)})`;
  if (el.fieldName) return `${root}.locator(${lit(`${el.tag.toLowerCase()}[name=${JSON.stringify(el.fieldName)}]`)})`;
  if (el.text && el.text.length <= 80) return `${root}.getByText(${lit(el.text)}, { exact: true })`;
  return `${root}.locator(${lit(el.css)})`;
}

function stepCode(s: RecordedStep, secrets: Set<string>, files: Set<string>): string[] {
  const a = s.args;
  const on = s.element ? locatorExpr(s.element) : undefined;
  switch (s.action) {
    case 'navigate':
      return typeof a.url === 'string' ? [`await page.goto(${lit(/^[a-z][a-z0-9+.-]*:/i.test(a.url) ? a.url : `https://${a.url}`)});`] : [];
    case 'click_element':
    case 'manual_click':
      return on ? [`await ${on}.click();`] : s.action === 'manual_click' ? [`await page.mouse.click(${Number(a.x)}, ${Number(a.y)});`] : [];
    case 'manual_double_click':
      return on ? [`await ${on}.dblclick();`] : [`await page.mouse.dblclick(${Number(a.x)}, ${Number(a.y)});`];
    case 'input_text': {
      if (!on || typeof a.text !== 'string') return [];
      const text = textExpr(a.text, secrets);
      return a.clear === false ? [`await ${on}.press('End');`, `await ${on}.pressSequentially(${text});`] : [`await ${on}.fill(${text});`];
    }
    case 'select_option': {
      if (!on) return [];
      const wanted = String(a.value ?? a.label ?? '');
      // The agent names an option by its text or its value: whichever the page has.
      return [`await ${on}.selectOption(${lit(wanted)}).catch(() => ${on}.selectOption({ label: ${lit(wanted)} }));`];
    }
    case 'send_keys':
      return typeof a.keys === 'string' ? a.keys.trim().split(/\s+/).map((k) => `await page.keyboard.press(${lit(k)});`) : [];
    case 'manual_key_press':
      return typeof a.key === 'string' ? [`await page.keyboard.press(${lit(a.key)});`] : [];
    case 'manual_type':
      return typeof a.text === 'string' ? [`await page.keyboard.type(${textExpr(a.text, secrets)});`] : ['// A person typed into a secret field here: fill it in yourself.', 'throw new Error("This step needs what a person typed into a secret field");'];
    case 'upload_file': {
      if (!on || !Array.isArray(a.fileIds)) return [];
      const ids = a.fileIds.map(String);
      ids.forEach((id) => files.add(id));
      return [`await ${on}.setInputFiles([${ids.map((id) => `env(${lit(fileEnvName(id))})`).join(', ')}]);`];
    }
    case 'scroll': {
      if (on) return [`await ${on}.scrollIntoViewIfNeeded();`];
      const pages = Math.min(Math.max(Number(a.amount ?? 1) || 1, 0.1), 10);
      return [`await page.mouse.wheel(0, ${a.direction === 'up' ? -pages : pages} * (page.viewportSize()?.height ?? 720));`];
    }
    case 'go_back':
      return ['await page.goBack();'];
    case 'switch_tab':
      return [`page = await tab(page, ${Number(a.index) || 0});`];
    case 'wait':
      return [`await page.waitForTimeout(${Math.min(Math.max(Number(a.seconds ?? 1), 0), 30) * 1000});`];
    case 'request_human_input':
      return ['// The agent asked a person for help here; do what they did before going on.'];
    case 'extract':
      return ['// The agent read the page here.'];
    case 'done':
      return ['// The task ended here.'];
    default:
      return [];
  }
}
