import { chromium, type Browser, type Page } from 'playwright-core';
import { describeElement } from '../agent/observe/element-info';
import { observePage } from '../agent/observe/observe';
import { describeForRecording } from './describe';
import { findAgain, replayPlan, samePage, stepLine } from './replay';
import type { ElementDescription, RecordedStep } from '../contracts/recording';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu'];

let browser: Browser;
let page: Page;
beforeAll(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
});
afterAll(() => browser?.close());
beforeEach(async () => {
  page = await browser.newPage({ viewport: { width: 1024, height: 600 } });
});
afterEach(() => page.close());

const ORIGINAL = `
  <h1>Checkout</h1>
  <form>
    <p><label for="email">Email</label> <input id="email" name="email" type="email"></p>
    <p><label for="city">City</label> <input id="city" name="city" placeholder="Your city"></p>
    <p><input type="checkbox" id="terms" name="terms"> <label for="terms">I accept the terms</label></p>
    <p><button type="button" data-testid="pay">Pay now</button> <a href="#help">Help</a></p>
  </form>`;

/** The elements a recording would describe on the original page. */
async function describeAll(html: string): Promise<Record<string, ElementDescription>> {
  await page.setContent(html);
  await observePage(page, { tokenBudget: 4000 }); // as in a task: the observation names the elements
  const out: Record<string, ElementDescription> = {};
  for (const [key, selector] of Object.entries({ email: '#email', city: '#city', terms: '#terms', pay: 'button', help: 'a' })) {
    const locator = page.locator(selector);
    out[key] = (await describeForRecording(locator, page.mainFrame(), await describeElement(locator)))!;
  }
  return out;
}

/** Which strategy finds each element on `html` (null: not found), and that it is the element meant. */
async function findAll(descs: Record<string, ElementDescription>, html: string, meant: Record<string, string>): Promise<Record<string, string | null>> {
  await page.setContent(html);
  const out: Record<string, string | null> = {};
  for (const [key, desc] of Object.entries(descs)) {
    const found = await findAgain(page, desc);
    out[key] = found?.strategy ?? null;
    if (found && meant[key]) expect(await found.locator.evaluate((el, sel) => el === document.querySelector(sel), meant[key])).toBe(true);
  }
  return out;
}

const MEANT = { email: 'input[type=email]', city: 'input[placeholder], input[name=town]', terms: 'input[type=checkbox]', pay: 'button', help: 'a' };

describe('describing an element and finding it again', () => {
  it('describes role, name, label, field name, test id, a CSS path and the box', async () => {
    const d = await describeAll(ORIGINAL);
    expect(d.email).toMatchObject({ role: 'textbox', name: 'Email', label: 'Email', id: 'email', fieldName: 'email', tag: 'INPUT', inputType: 'email', css: expect.stringMatching(/input$/) });
    expect(d.city.placeholder).toBe('Your city');
    expect(d.pay).toMatchObject({ role: 'button', name: 'Pay now', text: 'Pay now', testId: 'pay', tag: 'BUTTON' });
    expect(d.help).toMatchObject({ role: 'link', name: 'Help', text: 'Help', tag: 'A' });
    expect(d.pay.box.width).toBeGreaterThan(0);
    expect(d.pay.frame).toBeUndefined();
  });

  it('finds elements again on changed pages, and refuses one that is gone', async () => {
    const d = await describeAll(ORIGINAL);
    const figures: Record<string, Record<string, string | null>> = {};
    figures.same = await findAll(d, ORIGINAL, MEANT);
    expect(figures.same).toEqual({ email: 'id', city: 'id', terms: 'id', pay: 'testId', help: 'role' });

    // New markup around everything, ids and test ids dropped: role, label and text still find them.
    const rewrapped = `<main><section><div class="x"><h2>Checkout</h2><form>
      <div><label>Email <input name="email" type="email"></label></div>
      <div><label>City <input name="town" placeholder="Your city"></label></div>
      <div><label><input type="checkbox" name="terms"> I accept the terms</label></div>
      <div><span><button type="button">Pay now</button></span><a href="#help">Help</a></div></form></div></section></main>`;
    figures.rewrapped = await findAll(d, rewrapped, MEANT);
    expect(figures.rewrapped).toEqual({ email: 'role', city: 'role', terms: 'role', pay: 'role', help: 'role' });

    // Labels renamed, ids kept: found by id. The button renamed with its test id kept: by test id.
    const relabelled = ORIGINAL.replace('>Email<', '>E-mail address<').replace('>City<', '>Town<').replace('Pay now', 'Pay €12 now');
    figures.relabelled = await findAll(d, relabelled, MEANT);
    expect(figures.relabelled).toMatchObject({ email: 'id', city: 'id', pay: 'testId' });

    // The button renamed, moved and stripped of its test id: nothing names it any more.
    const moved = `<div><button type="button">Confirm purchase</button></div>${ORIGINAL.replace('<button type="button" data-testid="pay">Pay now</button>', '')}`;
    figures.moved = await findAll(d, moved, MEANT);
    expect(figures.moved.pay).toBeNull();
    expect(figures.moved.email).toBe('id');

    // Another element of the same kind in the old place is not taken for it (CSS path and position need a recorded text).
    const replaced = ORIGINAL.replace('<button type="button" data-testid="pay">Pay now</button>', '<button type="button">Cancel order</button>');
    expect((await findAll(d, replaced, MEANT)).pay).toBeNull();

    const counts = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, `${Object.values(v).filter(Boolean).length}/${Object.keys(v).length}`]));
    console.log(`elements found again: ${JSON.stringify(counts)}; strategies: ${JSON.stringify(figures)}`);
  });

  it('finds an element inside a named frame', async () => {
    await page.setContent(`<iframe name="pay-frame" srcdoc="<button>Pay</button>"></iframe>`);
    const frame = page.frame({ name: 'pay-frame' })!;
    await frame.waitForSelector('button');
    await observePage(page, { tokenBudget: 4000 });
    const locator = frame.locator('button');
    const desc = (await describeForRecording(locator, frame, await describeElement(locator)))!;
    expect(desc.frame).toMatchObject({ name: 'pay-frame' });
    const found = await findAgain(page, desc);
    expect(found?.strategy).toBe('role');
    expect(found?.frame).toBe(frame);
  });
});

describe('replay plans', () => {
  const step = (action: string, extra: Partial<RecordedStep> = {}): RecordedStep => ({ seq: 0, by: 'agent', action, args: {}, urlBefore: 'https://a.test/x', urlAfter: 'https://a.test/x', outcome: 'ok', at: '', ...extra });

  it('performs what succeeded, up to done; answers need the model only when the task reads the page', () => {
    const steps = [step('navigate'), step('click_element', { outcome: 'failed' }), step('input_text'), step('done')];
    expect(replayPlan(steps, { outputType: 'text' })).toMatchObject({ steps: [steps[0], steps[2]], done: steps[3], needsAnswer: false });
    expect(replayPlan(steps, { outputType: 'structured_json' }).needsAnswer).toBe(true);
    expect(replayPlan([step('extract'), step('done')], { outputType: 'text' })).toMatchObject({ steps: [], needsAnswer: true });
    const human = replayPlan([step('click_element'), step('request_human_input'), step('input_text'), step('done')], { outputType: 'text' });
    expect(human.steps).toHaveLength(1);
    expect(human.handOverAt?.action).toBe('request_human_input');
    expect(human.done).toBeUndefined();
  });

  it('compares pages by origin and path', () => {
    expect(samePage('https://a.test/x?y=1', 'https://a.test/x/#z')).toBe(true);
    expect(samePage('https://a.test/x', 'https://b.test/x')).toBe(false);
    expect(samePage('https://a.test/x', 'https://a.test/y')).toBe(false);
  });

  it('names a step in one line', () => {
    const s = step('input_text', { args: { text: '<secret>pw</secret>' }, element: { role: 'textbox', name: 'Password', tag: 'INPUT', css: 'input', box: { x: 0, y: 0, width: 1, height: 1 } } });
    expect(stepLine(s)).toBe('input_text textbox "Password" (text="<secret>pw</secret>") on https://a.test/x');
  });
});
