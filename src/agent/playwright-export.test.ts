import ts from 'typescript';
import { envName, locatorExpr, playwrightScript } from './playwright-export';
import type { ElementDescription, RecordedStep } from '../contracts/recording';

const el = (over: Partial<ElementDescription>): ElementDescription => ({ role: 'textbox', name: '', tag: 'INPUT', css: 'form > input', box: { x: 1, y: 1, width: 10, height: 10 }, ...over });
const step = (seq: number, action: string, args: Record<string, unknown>, over: Partial<RecordedStep> = {}): RecordedStep => ({
  seq,
  by: 'agent',
  action,
  args,
  urlBefore: 'https://shop.test/order',
  urlAfter: 'https://shop.test/order',
  outcome: 'ok',
  at: '2026-11-23T00:00:00.000Z',
  ...over,
});

/** Syntax errors of a TypeScript file (what would stop it from running). */
function syntaxErrors(source: string): string[] {
  const out = ts.transpileModule(source, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('Playwright export', () => {
  it('writes a runnable script: role locators first, secrets from the environment, waits where the page changed', () => {
    const script = playwrightScript({
      sessionId: 'ses1',
      taskId: 'task_1',
      steps: [
        step(0, 'input_text', { text: 'Ada', clear: true }, { element: el({ name: 'Name', label: 'Name' }) }),
        step(1, 'input_text', { text: 'pw: <secret>password</secret>!', clear: true }, { element: el({ name: 'Password', inputType: 'password' }) }),
        step(2, 'click_element', {}, { element: el({ role: 'button', name: 'Broken', tag: 'BUTTON' }), outcome: 'failed' }),
        step(3, 'select_option', { value: 'Pro' }, { element: el({ role: 'combobox', name: 'Plan', tag: 'SELECT', label: 'Plan' }) }),
        step(4, 'click_element', {}, { element: el({ role: 'button', name: 'Place order', tag: 'BUTTON' }), urlAfter: 'https://shop.test/submitted?x=1' }),
        step(5, 'done', { message: 'ok' }),
      ],
    });
    expect(syntaxErrors(script)).toEqual([]);
    expect(script).toContain("import { test, type Page } from '@playwright/test';");
    expect(script).toContain('await page.goto("https://shop.test/order");');
    expect(script).toContain('await page.getByRole("textbox", { name: "Name", exact: true }).fill("Ada");');
    expect(script).toContain('fill("pw: " + env("SECRET_PASSWORD") + "!")');
    expect(script).toContain('env("SECRET_PASSWORD");');
    expect(script).not.toContain('Broken');
    expect(script).toContain('await page.getByRole("combobox", { name: "Plan", exact: true }).selectOption("Pro")');
    expect(script).toContain('await page.getByRole("button", { name: "Place order", exact: true }).click();');
    expect(script).toContain(`=== "https://shop.test/submitted");`);
  });

  it('keeps hostile text from the page inside string literals and out of comments', () => {
    const hostile = 'x"); require("child_process").exec("rm -rf /"); ("\n*/ `${process.exit(1)}` \u2028';
    const script = playwrightScript({
      sessionId: 's*/ evil',
      taskId: 't\nconsole.log(1)',
      steps: [step(0, 'input_text', { text: hostile }, { element: el({ role: 'textbox', name: hostile }) }), step(1, 'navigate', { url: 'https://a.test/"+process.exit()+"' })],
    });
    expect(syntaxErrors(script)).toEqual([]);
    const code = script.split('\n').filter((l) => !l.trim().startsWith('//'));
    // The only calls are the script's own: the hostile text never becomes code.
    expect(code.join('\n')).not.toMatch(/^\s*require\(|;\s*require\("child_process"\)/m);
    for (const line of script.split('\n')) if (line.trim().startsWith('//')) expect(line).not.toMatch(/\n|\u2028/);
    expect(script).toContain(JSON.stringify(hostile));
  });

  it('names locators by role, label, placeholder, test id, id, text, then the CSS path; frames by name', () => {
    expect(locatorExpr(el({ testId: 'pay', name: 'Pay' }))).toBe('page.getByTestId("pay")');
    expect(locatorExpr(el({ role: 'generic', label: 'City' }))).toBe('page.getByLabel("City", { exact: true })');
    expect(locatorExpr(el({ role: 'generic', placeholder: 'Your city' }))).toBe('page.getByPlaceholder("Your city", { exact: true })');
    expect(locatorExpr(el({ role: 'generic', text: 'Read more' }))).toBe('page.getByText("Read more", { exact: true })');
    expect(locatorExpr(el({ role: 'generic' }))).toBe('page.locator("form > input")');
    expect(locatorExpr(el({ name: 'Pay', role: 'button', frame: { url: 'https://pay.test/f', name: 'card' } }))).toBe('page.frameLocator("iframe[name=\\"card\\"]").getByRole("button", { name: "Pay", exact: true })');
    expect(envName('api.key-2')).toBe('SECRET_API_KEY_2');
  });
});
