import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startFixtureServer } from '../../../test/support/fixtures-server';
import { TaskFailure } from '../../contracts/errors';
import { observePage } from '../observe/observe';
import type { ToolContext } from '../types';
import { clickElementTool } from './click-element';
import { extractTool } from './extract';
import { goBackTool } from './go-back';
import { inputTextTool } from './input-text';
import { forgetReloadAsk, navigateTool } from './navigate';
import { scrollTool } from './scroll';
import { selectOptionTool } from './select-option';
import { sendKeysTool } from './send-keys';
import { switchTabTool } from './switch-tab';
import { waitTool } from './wait';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu'];

let browser: Browser;
let server: { url: string; close(): Promise<void> };
let context: BrowserContext;
let ctx: ToolContext & { activations: Page[] };

beforeAll(async () => {
  [browser, server] = await Promise.all([
    chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS }),
    startFixtureServer(path.resolve(__dirname, '../../../test/fixtures')),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1024, height: 600 } });
  let page = await context.newPage();
  const activations: Page[] = [];
  ctx = {
    get page() {
      return page;
    },
    context,
    setActivePage: (p) => {
      activations.push(p);
      page = p;
    },
    // (long enough for a loaded machine; the tests of the timeout itself set 1500 ms)
    navigationTimeoutMs: 15_000,
    signal: new AbortController().signal,
    activations,
  };
});
afterEach(() => context.close());

const url = (file: string) => `${server.url}/${file}`;
const observe = async () => (await observePage(ctx.page, { tokenBudget: 6000 })).text;
/** Index of the element labelled exactly `label` in an observation. */
function indexOf(text: string, label: string): number {
  const m = new RegExp(`^\\[(\\d+)\\] \\S+ "${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`, 'm').exec(text);
  if (!m) throw new Error(`no element "${label}" in:\n${text}`);
  return Number(m[1]);
}
const failureOf = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);

describe('clicks', () => {
  it('clicks plainly clickable buttons (one in a shadow root too); a covered one takes the checked click and is reported', async () => {
    await navigateTool.execute(ctx, { url: url('click-cases.html') });
    const status = () => ctx.page.locator('#status').textContent();
    let obs = await observe();
    await clickElementTool.execute(ctx, { index: indexOf(obs, 'Plain') });
    expect(await status()).toBe('Plain');
    await clickElementTool.execute(ctx, { index: indexOf(obs, 'Inside shadow') });
    expect(await status()).toBe('shadow');
    obs = await observe();
    const covered = await failureOf(clickElementTool.execute(ctx, { index: indexOf(obs, 'Covered') }));
    expect(covered!.message).toBe(`Clicking [${indexOf(obs, 'Covered')}] button "Covered" failed: another element covers it: <div id="cover"></div>`);
    expect(await status()).toBe('shadow');
  }, 20_000);
});

describe('navigate to the page the tab shows', () => {
  it('is said, not done (a form sent to the page would be lost), and done when asked again at once', async () => {
    await navigateTool.execute(ctx, { url: url('form.html') });
    await ctx.page.fill('input[name=name]', 'typed');
    expect(await navigateTool.execute(ctx, { url: `${url('form.html')}#top` })).toEqual({
      summary: `Not opened: the tab already shows ${url('form.html')}, and the observation is that page. To load it again, call navigate with it once more.`,
      target: `${url('form.html')}#top`,
      unchanged: true,
    });
    expect(await ctx.page.inputValue('input[name=name]')).toBe('typed');
    expect((await navigateTool.execute(ctx, { url: url('form.html') })).summary).toBe(`Navigated to ${url('form.html')} ("Contact form")`);
    expect(await ctx.page.inputValue('input[name=name]')).toBe('');
  });

  it('is said again, not done, when another action came between the two asks', async () => {
    await ctx.page.goto(url('form.html'));
    forgetReloadAsk(ctx.page);
    expect((await navigateTool.execute(ctx, { url: url('form.html') })).summary).toMatch(/^Not opened: /);
    await ctx.page.fill('input[name=name]', 'typed');
    forgetReloadAsk(ctx.page);
    expect((await navigateTool.execute(ctx, { url: url('form.html') })).summary).toMatch(/^Not opened: /);
    expect(await ctx.page.inputValue('input[name=name]')).toBe('typed');
  });
});

describe('form and login flows', () => {
  it('fills and submits the contact form', async () => {
    const nav = await navigateTool.execute(ctx, { url: url('form.html') });
    expect(nav).toEqual({ summary: `Navigated to ${url('form.html')} ("Contact form")`, target: url('form.html') });
    const obs = await observe();

    expect(await inputTextTool.execute(ctx, { index: indexOf(obs, 'Name'), text: 'Ada', clear: true })).toEqual({
      summary: `Typed "Ada" into [${indexOf(obs, 'Name')}] textbox "Name"`,
      target: 'textbox "Name"',
    });
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Email'), text: 'ada@example.com', clear: true });
    const selected = await selectOptionTool.execute(ctx, { index: indexOf(obs, 'Topic'), value: 'Support' });
    expect(selected).toEqual({ summary: `Selected "Support" in [${indexOf(obs, 'Topic')}] select "Topic"`, target: 'select "Topic"' });
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Message'), text: 'Hello', clear: true });
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Message'), text: ' there', clear: false });
    expect(await ctx.page.inputValue('#message')).toBe('Hello there');

    const clicked = await clickElementTool.execute(ctx, { index: indexOf(obs, 'Send') });
    // The summary names the new page when the navigation lands within the settle window; on a
    // loaded machine it may land just after, so the page's URL is what is checked.
    expect(clicked.summary).toMatch(/^Clicked \[\d+\] button "Send"/);
    await ctx.page.waitForURL(`${url('thanks.html')}?name=Ada&email=ada%40example.com&topic=support&message=Hello+there`);
    expect(clicked.target).toBe('button "Send"');
    const after = await observe();
    expect(after).toContain('Thanks, Ada!');
    expect(after).toContain('Topic: support.');
  });

  it('submits with Enter through send_keys', async () => {
    await navigateTool.execute(ctx, { url: url('form.html') });
    const obs = await observe();
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Name'), text: 'Grace', clear: true });
    const pressed = await sendKeysTool.execute(ctx, { keys: 'Enter' });
    expect(pressed.summary).toMatch(/^Pressed Enter; page is now .*thanks\.html\?name=Grace/);
    expect(await observe()).toContain('Thanks, Grace!');
  });

  it('does not press Enter in a multi-line field: it names the form\'s button, and the text stays as typed', async () => {
    await navigateTool.execute(ctx, { url: url('form.html') });
    const obs = await observe();
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Message'), text: 'Hello', clear: true });
    const pressed = await sendKeysTool.execute(ctx, { keys: 'Enter' });
    expect(pressed).toEqual({
      summary: 'Not pressed: the focused field is a multi-line text field, where Enter adds a new line and does not send the form. To send the form, press its button "Send" (click_element).',
      target: 'Enter',
      unchanged: true,
    });
    expect(await ctx.page.inputValue('#message')).toBe('Hello');
    expect(ctx.page.url()).toBe(url('form.html'));
    // other keys are pressed there as asked
    await sendKeysTool.execute(ctx, { keys: 'Shift+Enter' });
    expect(await ctx.page.inputValue('#message')).toBe('Hello\n');
  });

  it('logs in without echoing the password or the one-time code', async () => {
    await navigateTool.execute(ctx, { url: url('login.html') });
    let obs = await observe();
    await inputTextTool.execute(ctx, { index: indexOf(obs, 'Username'), text: 'ada', clear: true });
    const password = await inputTextTool.execute(ctx, { index: indexOf(obs, 'Password'), text: 'pw-secret', clear: true });
    expect(password).toEqual({ summary: `Typed •••• into [${indexOf(obs, 'Password')}] textbox "Password"`, target: 'textbox "Password"' });
    expect(await observe()).not.toContain('pw-secret');
    await clickElementTool.execute(ctx, { index: indexOf(obs, 'Sign in') });

    obs = await observe();
    const code = await inputTextTool.execute(ctx, { index: indexOf(obs, 'One-time code'), text: '123456', clear: true });
    expect(JSON.stringify(code)).not.toContain('123456');
    await clickElementTool.execute(ctx, { index: indexOf(obs, 'Verify') });
    expect(await observe()).toContain('Welcome back, ada');
  });

  it('types an API-key-like text without echoing it', async () => {
    await navigateTool.execute(ctx, { url: url('form.html') });
    const obs = await observe();
    const typed = await inputTextTool.execute(ctx, { index: indexOf(obs, 'Message'), text: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', clear: true });
    expect(typed.summary).toBe(`Typed •••• into [${indexOf(obs, 'Message')}] textbox "Message"`);
  });
});

describe('failures', () => {
  it('times out navigating to a server that never answers, with the URL and timeout', async () => {
    const err = await failureOf(navigateTool.execute({ ...ctx, navigationTimeoutMs: 1500 }, { url: `${server.url}/hang` }));
    expect(err).toBeInstanceOf(TaskFailure);
    expect(err).toMatchObject({
      code: 'NAVIGATION_TIMEOUT',
      message: `Navigation to ${server.url}/hang timed out after 1500 ms`,
      details: { url: `${server.url}/hang`, timeout: 1500 },
    });
  });

  it('fails with NAVIGATION_TIMEOUT when nothing listens on the port', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    const target = `http://127.0.0.1:${port}/`;
    const err = await failureOf(navigateTool.execute({ ...ctx, navigationTimeoutMs: 1500 }, { url: target }));
    expect(err).toMatchObject({ code: 'NAVIGATION_TIMEOUT', details: { url: target, timeout: 1500, error: 'ERR_CONNECTION_REFUSED' } });
    expect(err!.message).toBe(`Navigation to ${target} failed: the site could not be reached (ERR_CONNECTION_REFUSED)`);
  });

  it('refuses addresses that are not http(s)', async () => {
    const err = await failureOf(navigateTool.execute(ctx, { url: 'file:///etc/passwd' }));
    expect(err).not.toBeInstanceOf(TaskFailure);
    expect(err!.message).toBe('Only http and https addresses can be opened, not file:');
  });

  it('stops waiting for a navigation when the task is aborted', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const pending = failureOf(navigateTool.execute({ ...ctx, page: ctx.page, navigationTimeoutMs: 30_000, signal: abort.signal }, { url: `${server.url}/hang` }));
    setTimeout(() => abort.abort(new Error('Task stopped')), 200);
    expect((await pending)!.message).toBe('Task stopped');
    // far below the 30 s navigation timeout: the abort, not the timeout, ended it
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('reports an unknown index as ELEMENT_NOT_FOUND', async () => {
    await navigateTool.execute(ctx, { url: url('index.html') });
    await observe();
    const err = await failureOf(clickElementTool.execute(ctx, { index: 99999 }));
    expect(err).toBeInstanceOf(TaskFailure);
    expect(err).toMatchObject({ code: 'ELEMENT_NOT_FOUND', message: 'No element with index 99999 on the page', details: { index: 99999 } });
  });

  it('explains why an element cannot be used', async () => {
    await navigateTool.execute(ctx, { url: url('form.html') });
    await ctx.page.evaluate(() => document.querySelector('button')!.setAttribute('disabled', ''));
    const obs = await observe();
    expect(obs).toMatch(/\] button "Send" disabled$/m);
    const err = await failureOf(clickElementTool.execute(ctx, { index: indexOf(obs, 'Send') }));
    expect(err).not.toBeInstanceOf(TaskFailure);
    expect(err!.message).toBe(`Clicking [${indexOf(obs, 'Send')}] button "Send" failed: the element is disabled`);

    const notSelect = await failureOf(selectOptionTool.execute(ctx, { index: indexOf(obs, 'Name'), value: 'x' }));
    expect(notSelect!.message).toBe(`[${indexOf(obs, 'Name')}] textbox "Name" is not a <select>: click it to open its list, then click the option`);
    const noOption = await failureOf(selectOptionTool.execute(ctx, { index: indexOf(obs, 'Topic'), label: 'Billing' }));
    expect(noOption!.message).toBe(`[${indexOf(obs, 'Topic')}] select "Topic" has no option "Billing"; its options are: "Sales", "Support"`);
    const intoSelect = await failureOf(inputTextTool.execute(ctx, { index: indexOf(obs, 'Topic'), text: 'x', clear: true }));
    expect(intoSelect!.message).toContain('use select_option');
  });

  it('select_option on a radio button chooses the radio of its group with that label', async () => {
    await ctx.page.setContent(
      '<form><p><input type="radio" id="b" name="plan" value="basic" checked><label for="b">Basic</label></p><p><input type="radio" id="s" name="plan" value="standard"><label for="s">Standard</label></p><p><input type="radio" id="o" name="other" value="x"><label for="o">Standard too</label></p></form>',
    );
    const obs = await observe();
    const chose = await selectOptionTool.execute(ctx, { index: indexOf(obs, 'Basic'), value: 'Standard' });
    expect(chose.summary).toContain('Chose the radio button "Standard"');
    expect(await ctx.page.evaluate(() => Array.from(document.querySelectorAll('input')).map((i) => `${i.id}:${i.checked}`).join(' '))).toBe('b:false s:true o:false');
    const missing = await failureOf(selectOptionTool.execute(ctx, { index: indexOf(obs, 'Basic'), value: 'Premium' }));
    expect(missing!.message).toContain('has no option "Premium"; its options are: "Basic", "Standard"');
  });

  it('select_option takes a short option only as a whole word, and an option quoted with an index', async () => {
    await ctx.page.setContent(
      '<form><label><input type="radio" name="c" value="olive" checked> Olive</label> <label><input type="radio" name="c" value="navy"> Navy</label> <label>Size <select name="s"><option>Small</option><option>L / Large</option></select></label></form>',
    );
    const obs = await observe();
    const letter = await failureOf(selectOptionTool.execute(ctx, { index: indexOf(obs, 'Olive'), value: 'L' }));
    expect(letter!.message).toContain('has no option "L"; its options are: "Olive", "Navy"');
    expect((await selectOptionTool.execute(ctx, { index: indexOf(obs, 'Olive'), value: 'Navy  [3]' })).summary).toContain('Chose the radio button "Navy"');
    expect((await selectOptionTool.execute(ctx, { index: indexOf(obs, 'Size'), value: 'L' })).summary).toContain('Selected "L / Large"');
  });

  it('turns a crashed page into PAGE_CRASH', async () => {
    await navigateTool.execute(ctx, { url: url('index.html') });
    const obs = await observe();
    await ctx.page.goto('chrome://crash').catch(() => undefined);
    const err = await failureOf(clickElementTool.execute(ctx, { index: indexOf(obs, 'About') }));
    expect(err).toMatchObject({ code: 'PAGE_CRASH' });
    expect(await failureOf(observePage(ctx.page, { tokenBudget: 1000 }))).toMatchObject({ code: 'PAGE_CRASH' });
  });
});

describe('tabs, history, scrolling, reading', () => {
  it('makes a tab opened by a click the active page, and switches tabs', async () => {
    await navigateTool.execute(ctx, { url: url('index.html') });
    await ctx.page.evaluate(() => {
      const a = document.createElement('a');
      a.href = 'about.html';
      a.target = '_blank';
      a.textContent = 'About in a new tab';
      document.body.append(a);
    });
    const first = ctx.page;
    const obs = await observe();
    const clicked = await clickElementTool.execute(ctx, { index: indexOf(obs, 'About in a new tab') });
    expect(clicked.summary).toBe(`Clicked [${indexOf(obs, 'About in a new tab')}] link "About in a new tab"; it opened a new tab [1] ${url('about.html')}, which is now the active tab`);
    expect(ctx.activations).toHaveLength(1);
    expect(ctx.page).not.toBe(first);
    expect(await observe()).toContain('The answer is 42');

    const switched = await switchTabTool.execute(ctx, { index: 0 });
    expect(switched).toEqual({ summary: `Switched to tab [0] "Fixture Home" (${url('index.html')})`, target: url('index.html') });
    expect(ctx.page).toBe(first);
    // The tab it is on already: nothing switched, and said so.
    const activations = ctx.activations.length;
    const again = await switchTabTool.execute(ctx, { index: 0 });
    expect(again).toEqual({
      summary: 'Not switched: tab [0] "Fixture Home" is already the active tab, and the observation is that page. Read what you need there (or use extract), then act on it or call done.',
      target: url('index.html'),
      unchanged: true,
    });
    expect(ctx.activations).toHaveLength(activations);
    expect(ctx.page).toBe(first);
    expect((await failureOf(switchTabTool.execute(ctx, { index: 5 })))!.message).toBe('There is no tab 5; the open tabs are 0 to 1');
  });

  it('goes back', async () => {
    await navigateTool.execute(ctx, { url: url('index.html') });
    const obs = await observe();
    const clicked = await clickElementTool.execute(ctx, { index: indexOf(obs, 'About') });
    expect(clicked.summary).toBe(`Clicked [${indexOf(obs, 'About')}] link "About"; page is now ${url('about.html')}`);
    expect(await goBackTool.execute(ctx, {})).toEqual({ summary: `Went back; page is now ${url('index.html')}`, target: url('index.html') });
    // The tab opened on about:blank before its first page: going back there would leave the site.
    expect((await failureOf(goBackTool.execute(ctx, {})))!.message).toBe(
      `Going back failed: there is no earlier page in this tab; it opened at ${url('index.html')}. The observation is this page.`,
    );
    expect(ctx.page.url()).toBe(url('index.html'));
    expect(await observe()).toContain('About');
  });

  it('goes back on a blank tab: refused, the tab stays as it is', async () => {
    expect((await failureOf(goBackTool.execute(ctx, {})))!.message).toBe('Going back failed: there is no earlier page in this tab; it opened at about:blank. The observation is this page.');
    expect(ctx.page.url()).toBe('about:blank');
  });

  it('scrolls by pages and to an element', async () => {
    await navigateTool.execute(ctx, { url: url('big.html') });
    const down = await scrollTool.execute(ctx, { direction: 'down', amount: 2 });
    expect(down.summary).toMatch(/^Scrolled the page down by 2 page\(s\); now at 1200px of \d+px \(viewport 600px\)$/);
    const obs = await observe();
    expect(obs).toMatch(/more interactive elements above the viewport/);
    const up = await scrollTool.execute(ctx, { direction: 'up', amount: 10 });
    expect(up.summary).toMatch(/^Scrolled the page up by 2 page\(s\); now at 0px/);
    expect((await scrollTool.execute(ctx, { direction: 'up', amount: 1 })).summary).toMatch(/^Could not scroll up: the page is already at the top/);

    const below = indexOf(await observe(), 'Edit 20');
    expect(await scrollTool.execute(ctx, { direction: 'down', amount: 1, index: below })).toEqual({ summary: `Scrolled [${below}] button "Edit 20" into view`, target: 'button "Edit 20"' });
    expect(await ctx.page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
  });

  it('clicks by index on the big page', async () => {
    await navigateTool.execute(ctx, { url: url('big.html') });
    const obs = await observe();
    await clickElementTool.execute(ctx, { index: indexOf(obs, 'Edit 3') });
    expect(await ctx.page.textContent('#status')).toBe('Clicked: Edit 3');
  });

  it('reads the page text for extract', async () => {
    await navigateTool.execute(ctx, { url: url('about.html') });
    const read = await extractTool.execute(ctx, { query: 'the answer' });
    expect(read.summary).toBe(`Text of ${url('about.html')} for "the answer":\nAbout\nThe answer is 42\nBack home`);

    await navigateTool.execute(ctx, { url: url('big.html') });
    const big = await extractTool.execute(ctx, { query: 'order 399' });
    expect(big.summary).toContain('Order 399');
    expect(big.summary).toMatch(/characters of less relevant text left out\)$/);
    expect(big.summary.length).toBeLessThan(4300);
  });

  it('waits, and stops waiting on abort', async () => {
    expect(await waitTool.execute(ctx, { seconds: 0.1 })).toEqual({ summary: 'Waited 0.1 s', target: '0.1 s' });
    const abort = new AbortController();
    const started = Date.now();
    const pending = failureOf(waitTool.execute({ ...ctx, page: ctx.page, signal: abort.signal }, { seconds: 10 }));
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
