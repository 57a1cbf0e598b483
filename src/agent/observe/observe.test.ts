import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startFixtureServer } from '../../../test/support/fixtures-server';
import { TaskFailure } from '../../contracts/errors';
import { observePage } from './observe';
import { resolveElement } from './resolve';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu'];
const BUDGET = 6000;

let browser: Browser;
let server: { url: string; close(): Promise<void> };
let context: BrowserContext;
let page: Page;

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
  page = await context.newPage();
});
afterEach(() => context.close());

const open = async (file: string) => {
  await page.goto(`${server.url}/${file}`, { waitUntil: 'domcontentloaded' });
};
const observe = () => observePage(page, { tokenBudget: BUDGET });

/** `[12] button "Send"` lines as {index, role, label, rest}. */
function elementLines(text: string) {
  return [...text.matchAll(/^\[(\d+)\] (\S+) "((?:[^"\\]|\\.)*)"(.*)$/gm)].map((m) => ({ index: Number(m[1]), role: m[2], label: m[3], rest: m[4] }));
}
function indexOf(text: string, label: string): number {
  const found = elementLines(text).find((e) => e.label === label);
  if (!found) throw new Error(`no element "${label}" in:\n${text}`);
  return found.index;
}
const status = () => page.locator('#status').textContent();

describe('observePage', () => {
  it('describes a simple page: URL, title, tabs, elements and text', async () => {
    await open('index.html');
    const obs = await observe();
    expect(obs.url).toBe(`${server.url}/index.html`);
    expect(obs.title).toBe('Fixture Home');
    expect(obs.tabs).toEqual([{ index: 0, url: `${server.url}/index.html`, title: 'Fixture Home', active: true }]);
    expect(obs.elementCount).toBe(2);
    expect(obs.text).toMatch(/^\[1\] link "Contact form"$/m);
    expect(obs.text).toMatch(/^\[2\] link "About"$/m);
    expect(obs.text).toContain('Pages for testing the browser agent.');
    expect(obs.tokens).toBe(Math.ceil(obs.text.length / 4));
    expect(obs.screenshot).toBeUndefined();
  });

  it('labels form fields and gives their hints, and never shows a password', async () => {
    await open('form.html');
    await page.fill('#name', 'Ada');
    let obs = await observe();
    const lines = elementLines(obs.text);
    expect(lines.map((l) => `${l.role} "${l.label}"`)).toEqual(['textbox "Name"', 'textbox "Email"', 'select "Topic"', 'textbox "Message"', 'button "Send"']);
    expect(obs.text).toMatch(/\] textbox "Name" value="Ada"$/m);
    expect(obs.text).toMatch(/\] textbox "Email" type=email empty$/m);
    expect(obs.text).toMatch(/\] select "Topic" value="Sales" options="Sales \| Support"$/m);
    // A filled field the form would refuse says so; an empty one does not.
    await page.fill('#email', 'Please send my invoice');
    obs = await observe();
    expect(obs.text).toMatch(/\] textbox "Email" type=email value="Please send my invoice" invalid$/m);
    expect(obs.text).toMatch(/\] textbox "Name" value="Ada"$/m);
    await page.fill('#email', 'ada@example.com');
    expect((await observe()).text).toMatch(/\] textbox "Email" type=email value="ada@example.com"$/m);

    await open('login.html');
    await page.fill('#username', 'ada');
    await page.fill('#password', 'pw-secret');
    obs = await observe();
    expect(obs.text).toMatch(/\] textbox "Password" type=password value="••••"$/m);
    expect(obs.text).not.toContain('pw-secret');
    // a "show password" toggle does not reveal it either
    await page.evaluate(() => document.querySelector('#password')!.setAttribute('type', 'text'));
    obs = await observe();
    expect(obs.text).not.toContain('pw-secret');
  });

  it('names the files a file input holds, and says empty when it holds none', async () => {
    await open('upload.html');
    expect((await observe()).text).toMatch(/\] file "Document" type=file empty$/m);
    await page.setInputFiles('#doc', [{ name: 'cv-grace.txt', mimeType: 'text/plain', buffer: Buffer.from('Grace') }]);
    expect((await observe()).text).toMatch(/\] file "Document" type=file value="cv-grace.txt"$/m);
  });

  it('finds elements in iframes, shadow roots, custom widgets and dialogs, and leaves out what a modal hides', async () => {
    await open('hard.html');
    await page.frameLocator('iframe').locator('#frame-button').waitFor();
    let obs = await observe();
    expect(obs.text).toContain('A modal dialog is open ("Please confirm")');
    expect(obs.text).toMatch(/\] button "Confirm in dialog"$/m);
    expect(obs.text).not.toContain('Hidden behind modal');
    expect(obs.text).not.toContain('Frame button');
    expect(obs.text).toContain('Confirm before you go on.');

    await (await resolveElement(page, indexOf(obs.text, 'Confirm in dialog'))).click();
    expect(await status()).toBe('Clicked: Confirm in dialog');

    obs = await observe();
    const labels = elementLines(obs.text).map((l) => `${l.role} "${l.label}"`);
    expect(labels).toEqual(
      expect.arrayContaining([
        'button "Frame button"',
        'button "Shadow button"',
        'button "Custom widget"',
        'clickable "Clickable div"',
        'textbox "Notes"',
        'button "More options"',
        'button "Hidden behind modal"',
      ]),
    );
    expect(labels).not.toContain('button "Confirm in dialog"');
    expect(obs.text).toMatch(/\] button "More options" collapsed$/m);
    expect(obs.text).toContain('Inside the frame');

    for (const label of ['Frame button', 'Shadow button', 'Custom widget', 'Clickable div', 'Hidden behind modal']) {
      await (await resolveElement(page, indexOf(obs.text, label))).click();
      expect(await status()).toBe(`Clicked: ${label}`);
    }
    await (await resolveElement(page, indexOf(obs.text, 'Notes'))).fill('remember the milk');
    obs = await observe();
    expect(obs.text).toMatch(/\] textbox "Notes" value="remember the milk"$/m);
  });

  it('keeps indices stable across observations, unique across frames, and numbers new elements after them', async () => {
    await open('hard.html');
    await page.click('#confirm');
    await page.frameLocator('iframe').locator('#frame-button').waitFor();
    const first = elementLines((await observe()).text);
    const second = elementLines((await observe()).text);
    expect(second).toEqual(first);
    const indices = first.map((l) => l.index);
    expect(new Set(indices).size).toBe(indices.length);

    await page.evaluate(() => {
      const b = document.createElement('button');
      b.textContent = 'Added later';
      document.body.prepend(b);
    });
    const third = elementLines((await observe()).text);
    const added = third.find((l) => l.label === 'Added later')!;
    expect(added.index).toBeGreaterThan(Math.max(...indices));
    for (const l of first) expect(third.find((t) => t.label === l.label)?.index).toBe(l.index);

    // a new document numbers from 1 again
    await open('index.html');
    expect(elementLines((await observe()).text)[0].index).toBe(1);
  });

  it('reads each new document, also when the one it read before was replaced: a navigation, a reload, an iframe that navigated, a document that replaced itself', async () => {
    await open('index.html');
    expect((await observe()).text).toMatch(/^\[1\] link "Contact form"$/m);
    await open('about.html');
    const about = await observe();
    expect(about.title).toBe('About');
    expect(about.text).toMatch(/\] link "Back home"$/m);
    expect(about.text).not.toContain('Contact form');

    await page.evaluate(() => {
      document.body.insertAdjacentHTML('beforeend', '<button>Before reload</button>');
    });
    expect((await observe()).text).toContain('"Before reload"');
    await page.reload({ waitUntil: 'domcontentloaded' });
    expect((await observe()).text).not.toContain('Before reload');

    await open('hard.html');
    await page.click('#confirm');
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    await frame.locator('#frame-button').waitFor();
    expect((await observe()).text).toMatch(/\] button "Frame button"$/m);
    await frame.goto(`${server.url}/about.html`);
    const inFrame = await observe();
    expect(inFrame.text).toMatch(/\] link "Back home"$/m);
    expect(inFrame.text).not.toContain('"Frame button"');

    // A document written over by its own script is a new document too.
    await page.evaluate(() => {
      document.open();
      document.write('<title>Written</title><button>Written button</button>');
      document.close();
    });
    const written = await observe();
    expect(written.title).toBe('Written');
    expect(written.text).toMatch(/\] button "Written button"$/m);
  });

  it('fits a page with 1,600 controls into the budget, listing what is in view and summarising the rest', async () => {
    await open('big.html');
    await observe(); // warm-up: first numbering of the page
    const started = performance.now();
    const obs = await observe();
    const ms = performance.now() - started;
    console.log(`big.html observation: ${ms.toFixed(1)} ms, ${obs.tokens} tokens (budget ${BUDGET}), ${obs.elementCount} elements`);
    expect(obs.elementCount).toBe(1601);
    expect(obs.tokens).toBeLessThanOrEqual(BUDGET);
    expect(obs.text).toMatch(/^\[1\] button "Top action"$/m);
    expect(obs.text).toMatch(/^\.\.\. \d+ more interactive elements below the viewport \(scroll down to see them\)$/m);
    expect(obs.text).toContain('Order 1 | Details 1 | Edit 1');
    expect(obs.text).toMatch(/\] textbox "Quantity 1" value="1"$/m);
    expect(obs.text).toMatch(/\] checkbox "Select 1"$/m);

    const small = await observePage(page, { tokenBudget: 400 });
    console.log(`big.html with a 400-token budget: ${small.tokens} tokens`);
    expect(small.tokens).toBeLessThanOrEqual(400);
    expect(small.text).toMatch(/^\[1\] button "Top action"$/m);
    expect(small.text).toMatch(/more interactive elements (below the viewport|in the viewport not listed)/);

    // far down the page, the elements above are summarised too
    await page.evaluate(() => window.scrollTo(0, 5000));
    const middle = await observe();
    expect(middle.tokens).toBeLessThanOrEqual(BUDGET);
    expect(middle.text).toMatch(/^\.\.\. \d+ more interactive elements above the viewport \(scroll up to see them\)$/m);
    expect(middle.text).toMatch(/^Scroll: 5000px of \d+px page height/m);
  });

  it('handles custom controls, hidden and inert elements, and quotes in labels', async () => {
    await page.setContent(`
      <input type="checkbox" id="terms" style="display:none" checked><label for="terms">I agree</label>
      <div id="card" style="cursor:pointer;width:100px">Listener-only card</div>
      <div role="switch" aria-checked="true" tabindex="0">Dark mode</div>
      <label><input type="checkbox"> Newsletter</label>
      <div role="switch" aria-checked="false" tabindex="0">Autoplay</div>
      <label><input type="radio" name="r"> Express</label>
      <button style="visibility:hidden">Invisible</button>
      <button style="display:none">Not displayed</button>
      <div inert><button>Inert button</button></div>
      <button disabled>Disabled button</button>
      <a href="/x"><img alt="Logo image"></a>
      <button>Say "hi" \\ bye</button>
      <input placeholder="Search the site">
      <input type="submit" value="Go">
    `);
    const text = (await observe()).text;
    const labels = elementLines(text).map((l) => `${l.role} "${l.label}"${l.rest}`);
    expect(labels).toEqual([
      'checkbox "I agree" checked',
      'clickable "Listener-only card"',
      'switch "Dark mode" checked',
      // a box unticked, a switch off and a radio not chosen say nothing
      'checkbox "Newsletter"',
      'switch "Autoplay"',
      'radio "Express"',
      'button "Disabled button" disabled',
      'link "Logo image"',
      'button "Say \\"hi\\" \\\\ bye"',
      'textbox "Search the site" empty',
      'button "Go"',
    ]);
    await (await resolveElement(page, indexOf(text, 'I agree'))).click();
    expect(await page.isChecked('#terms')).toBe(false);
  });

  it('leaves out what an aria-modal dialog covers', async () => {
    await page.setContent(`
      <button>Behind</button>
      <div role="dialog" aria-modal="true" aria-label="Cookies"><button>Accept all</button></div>
    `);
    const text = (await observe()).text;
    expect(elementLines(text).map((l) => l.label)).toEqual(['Accept all']);
    expect(text).toContain('A modal dialog is open ("Cookies"): only its elements are listed; 1 element behind it cannot be used until it is closed.');
  });

  it('says when a page that fits the viewport has an area that scrolls, and nothing of scrolling when none does', async () => {
    await page.setContent('<h1>Inbox</h1><div style="height:200px;overflow:auto"><p style="height:900px">Message 1</p></div>');
    expect((await observe()).text).toMatch(/^Scroll: the page fits the viewport, but an area in it scrolls/m);
    await page.setContent('<h1>Inbox</h1><div style="height:200px;overflow:auto"><p>Message 1</p></div>');
    expect((await observe()).text).not.toMatch(/^Scroll:/m);
    await page.setContent('<h1>Inbox</h1><p style="height:2000px">Message 1</p>');
    expect((await observe()).text).toMatch(/^Scroll: 0px of \d+px page height/m);
  });

  it("reads a table row's cells apart, and shows the text below the viewport when the page ends soon after it", async () => {
    const filler = '<p style="height: 620px">Overview of the camera.</p>';
    await page.setContent(`<title>Camera</title>${filler}<table><tr><th>Spec</th><th>Value</th><th></th></tr><tr><td>Weight</td><td>468 g</td><td><button>Compare</button></td></tr></table><p>In the box: a strap.</p>`);
    const short = await observe();
    expect(short.text).toContain("\nVisible text:\nOverview of the camera.\nThe rest of the page's text (below the viewport):\nSpec | Value\nWeight | 468 g | Compare\nIn the box: a strap.");
    expect(short.text).not.toContain('more characters of text below the viewport');
    // in view, the cells are apart as well
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    expect((await observe()).text).toMatch(/\nVisible text:\n(?:[^\n]*\n)*?Spec \| Value\nWeight \| 468 g \| Compare\n/);
    // a page that goes on further: only counted
    await page.setContent(`<title>Camera</title>${filler}${'<p>Long text here.</p>'.repeat(60)}`);
    await page.evaluate(() => window.scrollTo(0, 0));
    const long = await observe();
    expect(long.text).not.toContain("The rest of the page's text");
    expect(long.text).toContain('(about 900 more characters of text below the viewport');
  });

  it('takes a screenshot when asked', async () => {
    await open('about.html');
    const obs = await observePage(page, { tokenBudget: BUDGET, screenshot: true });
    // a JPEG (its secret fields painted over, none here)
    expect([...Buffer.from(obs.screenshot!, 'base64').subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect(obs.text).toContain('The answer is 42');
  });

  it('lists all open tabs', async () => {
    await open('index.html');
    const other = await context.newPage();
    await other.goto(`${server.url}/about.html`);
    const obs = await observe();
    expect(obs.tabs).toEqual([
      { index: 0, url: `${server.url}/index.html`, title: 'Fixture Home', active: true },
      { index: 1, url: `${server.url}/about.html`, title: 'About', active: false },
    ]);
    expect(obs.text).toContain('Tabs: [0] Fixture Home (active) | [1] About');
  });
});

describe('resolveElement', () => {
  it('fails with ELEMENT_NOT_FOUND for an index nobody has', async () => {
    await open('index.html');
    await observe();
    const err = await resolveElement(page, 99999).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskFailure);
    expect(err).toMatchObject({ code: 'ELEMENT_NOT_FOUND', message: 'No element with index 99999 on the page', details: { index: 99999 } });
  });
});
