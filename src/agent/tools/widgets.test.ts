/** Widgets a model loses its way in: a custom listbox, a date field, an infinite list. */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { observePage } from '../observe/observe';
import type { ToolContext } from '../types';
import { extractTool } from './extract';
import { inputTextTool } from './input-text';
import { scrollTool } from './scroll';
import { selectOptionTool } from './select-option';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run'];

let browser: Browser;
let context: BrowserContext;
let page: Page;
let ctx: ToolContext;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
});
afterAll(() => browser?.close());
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1024, height: 600 } });
  page = await context.newPage();
  ctx = { page, context, setActivePage: () => undefined, navigationTimeoutMs: 2000, signal: new AbortController().signal };
});
afterEach(() => context.close());

/** The index of the element whose line matches `pattern` in a fresh observation. */
async function indexOf(pattern: RegExp): Promise<number> {
  const text = (await observePage(page, { tokenBudget: 6000 })).text;
  const line = text.split('\n').find((l) => pattern.test(l));
  if (!line) throw new Error(`no element ${pattern} in:\n${text}`);
  return Number(/^\[(\d+)\]/.exec(line)![1]);
}

const COMBOBOX = `<label id="l">Fruit</label>
  <div role="combobox" aria-labelledby="l" aria-expanded="false" aria-controls="fruits" tabindex="0" id="box"
       onclick="document.getElementById('fruits').hidden = false; this.setAttribute('aria-expanded', 'true')">Choose…</div>
  <ul role="listbox" id="fruits" hidden>
    <li role="option" onclick="document.getElementById('box').textContent = this.textContent; document.getElementById('fruits').hidden = true">Apple</li>
    <li role="option" onclick="document.getElementById('box').textContent = this.textContent; document.getElementById('fruits').hidden = true">Blood orange</li>
  </ul>`;

describe('select_option in a custom widget', () => {
  it('opens a combobox and clicks the option named by its text', async () => {
    await page.setContent(COMBOBOX);
    const index = await indexOf(/combobox "Fruit"/);
    const result = await selectOptionTool.execute(ctx, { index, value: 'blood orange' });
    expect(result.summary).toBe(`Selected "Blood orange" in [${index}] combobox "Fruit"`);
    expect(await page.textContent('#box')).toBe('Blood orange');
  });

  it('says which options there are when none matches', async () => {
    await page.setContent(COMBOBOX);
    const index = await indexOf(/combobox "Fruit"/);
    await expect(selectOptionTool.execute(ctx, { index, value: 'Pear' })).rejects.toThrow(`[${index}] combobox "Fruit" has no option "Pear"; its options are: "Apple", "Blood orange"`);
  });

  it('takes a button that opens a list it does not name as a combobox, with the list\'s options, and chooses in it', async () => {
    await page.setContent(`<p><span id="pl">Priority</span>: <button id="prio" aria-haspopup="listbox" aria-labelledby="pl prio" onclick="document.getElementById('opts').hidden = !document.getElementById('opts').hidden">Normal</button></p>
      <ul id="opts" role="listbox" aria-label="Priority options" hidden>
        <li role="option" onclick="document.getElementById('prio').textContent = this.textContent; this.parentElement.hidden = true">Low</li>
        <li role="option" onclick="document.getElementById('prio').textContent = this.textContent; this.parentElement.hidden = true">Normal</li>
        <li role="option" onclick="document.getElementById('prio').textContent = this.textContent; this.parentElement.hidden = true">High</li>
      </ul><button>Save ticket</button>`);
    const text = (await observePage(page, { tokenBudget: 6000 })).text;
    expect(text).toMatch(/\[\d+\] combobox "Priority Normal" value="Normal" options="Low \| Normal \| High"/);
    expect(text).toMatch(/\[\d+\] button "Save ticket"/);
    const index = await indexOf(/combobox "Priority Normal"/);
    const result = await selectOptionTool.execute(ctx, { index, value: 'High' });
    expect(result.summary).toBe(`Selected "High" in [${index}] combobox "Priority Normal"`);
    expect(await page.textContent('#prio')).toBe('High');
  });

  it('chooses in an open listbox', async () => {
    await page.setContent(`<div role="listbox" aria-label="Size"><div role="option" onclick="window.chosen = 'S'">Small</div><div role="option" onclick="window.chosen = 'L'">Large</div></div>`);
    const index = await indexOf(/listbox "Size"|option "Large"/);
    await selectOptionTool.execute(ctx, { index, value: 'Large' });
    expect(await page.evaluate(() => (window as unknown as { chosen: string }).chosen)).toBe('L');
  });
});

describe('a date field', () => {
  it('takes a date written in the common forms', async () => {
    await page.setContent('<label>Arrival <input type="date" id="d"></label>');
    const index = await indexOf(/Arrival/);
    for (const text of ['March 14 2026', '03/14/2026', '2026-03-14']) {
      await page.fill('#d', '');
      await inputTextTool.execute(ctx, { index, text, clear: true });
      expect(await page.inputValue('#d')).toBe('2026-03-14');
    }
    await expect(inputTextTool.execute(ctx, { index, text: 'next week', clear: true })).rejects.toThrow('is a date field: give the date as YYYY-MM-DD');
  });

  it('is set, not appended to, when asked to append', async () => {
    await page.setContent('<label>Arrival <input type="date" id="d"></label><label>Guests <input type="number" id="n" value="2"></label>');
    const result = await inputTextTool.execute(ctx, { index: await indexOf(/Arrival/), text: '14 March 2026', clear: false });
    expect(result.summary).toMatch(/^Typed "2026-03-14" into \[\d+\] /);
    expect(await page.inputValue('#d')).toBe('2026-03-14');
    await inputTextTool.execute(ctx, { index: await indexOf(/Guests/), text: '4', clear: false });
    expect(await page.inputValue('#n')).toBe('4');
  });
});

describe('an infinite list', () => {
  it('is reported as more items loaded after a scroll to its end', async () => {
    await page.setContent(`<ul id="list"></ul><script>
      const list = document.getElementById('list');
      const add = (n) => { for (let i = 0; i < n; i++) { const li = document.createElement('li'); li.textContent = 'Item ' + (list.children.length + 1); li.style.height = '40px'; list.appendChild(li); } };
      add(30);
      window.addEventListener('scroll', () => { if (innerHeight + scrollY >= document.body.scrollHeight - 50 && list.children.length < 60) setTimeout(() => add(20), 200); });
    </script>`);
    const result = await scrollTool.execute(ctx, { direction: 'down', amount: 2 });
    expect(result.summary).toMatch(/; 20 more items loaded$/);
    const top = await scrollTool.execute(ctx, { direction: 'up', amount: 10 });
    expect(top.summary).not.toContain('loaded');
  });

  /** Invoices #1001 on, 10 at a time as the end of the list comes into view, up to #1040. */
  const INVOICES = `<h1>Invoices</h1><ul id="list"></ul><p id="more" style="height: 40px">Loading more…</p><script>
    let next = 1001;
    const load = () => {
      for (let i = 0; i < 10 && next <= 1040; i++, next++) {
        const li = document.createElement('li'); li.style.height = '60px';
        li.textContent = 'Invoice #' + next + ': €' + (next === 1025 ? '512.40' : (next / 10).toFixed(2));
        document.getElementById('list').append(li);
      }
    };
    load();
    new IntersectionObserver((seen) => { if (seen.some((e) => e.isIntersecting)) setTimeout(load, 200); }).observe(document.getElementById('more'));
  </script>`;

  it('is scrolled to its end by extract until the number asked for is loaded', async () => {
    await page.setContent(INVOICES);
    const result = await extractTool.execute(ctx, { query: 'Invoice #1025' });
    expect(result.summary).toMatch(/^Text of .* for "Invoice #1025":\n\(Scrolled down to load more: (10|20) more items loaded\.\)\nBest match for "Invoice #1025":\nInvoice #1025: €512\.40\n/);
    expect(result.summary).not.toContain('nowhere');
    // Stopped once it held the invoice: not the whole list.
    expect(await page.locator('li').count()).toBeLessThan(40);
  });

  it('is scrolled to its end by extract, and said to be, when the number is not in it', async () => {
    await page.setContent(INVOICES);
    const result = await extractTool.execute(ctx, { query: 'Invoice #1077' });
    expect(result.summary).toContain('(Scrolled down to load more: 30 more items loaded.)');
    expect(result.summary).toContain('"#1077" is nowhere in this page\'s text, its lists scrolled to their end: it may be on another page.');
    expect(await page.locator('li').count()).toBe(40);
  });

  /** Reviews in boxes of one class (no list elements), 5 at a time as the end comes into view; Helga K.'s is the 12th. */
  // Each review is taller than a fifth of the viewport, so the first five leave "Loading more…"
  // below it: nothing loads before the first scroll (else the count races the page's timer).
  const REVIEWS = `<h1>Reviews</h1><div id="reviews"></div><p id="more" style="height: 40px">Loading more…</p><script>
    const who = ['Tom W.', 'Ana P.', 'Chris B.', 'Lena M.', 'Raj S.', 'Mo K.', 'Ellie R.', 'Sven D.', 'Yuki T.', 'Olu A.', 'Marta G.', 'Helga K.', 'Ben H.'];
    let next = 0;
    const load = () => {
      for (let i = 0; i < 5 && next < who.length; i++, next++) {
        const div = document.createElement('div'); div.className = 'review'; div.style.height = '150px';
        div.textContent = (who[next] === 'Helga K.' ? 'Handle gets far too hot' : 'Great pan') + ' by ' + who[next];
        document.getElementById('reviews').append(div);
      }
    };
    load();
    new IntersectionObserver((seen) => { if (seen.some((e) => e.isIntersecting)) setTimeout(load, 200); }).observe(document.getElementById('more'));
  </script>`;

  it('of boxes (no list elements) is reported as more items loaded, and scrolled by extract until the person asked for is loaded', async () => {
    await page.setContent(REVIEWS);
    const scrolled = await scrollTool.execute(ctx, { direction: 'down', amount: 1 });
    expect(scrolled.summary).toMatch(/; 5 more items loaded$/);
    const result = await extractTool.execute(ctx, { query: "Helga K.'s complaint" });
    expect(result.summary).toMatch(/\(Scrolled down to load more: \d+ more items? loaded\.\)/);
    expect(result.summary).toContain('Handle gets far too hot by Helga K.');
    expect(result.summary).not.toContain('nowhere');
    // someone the list does not hold: said so, once it is scrolled to its end
    expect((await extractTool.execute(ctx, { query: 'the review by marco_p' })).summary).toContain('"marco_p" is nowhere in this page\'s text');
  });

  it('is left where it was when extract asks for a number of a list that loads no more', async () => {
    await page.setContent(`<ul>${Array.from({ length: 30 }, (_, i) => `<li style="height: 60px">Order ${4000 + i}</li>`).join('')}</ul>`);
    await page.evaluate(() => window.scrollTo(0, 300));
    const result = await extractTool.execute(ctx, { query: 'order 5123' });
    expect(result.summary).toContain('"5123" is nowhere in this page\'s text, its lists scrolled to their end');
    expect(result.summary).not.toContain('Scrolled down');
    expect(await page.evaluate(() => window.scrollY)).toBe(300);
    // A number the page holds: nothing scrolled at all.
    expect((await extractTool.execute(ctx, { query: 'order 4012' })).summary).toContain('Best match for "order 4012":\nOrder 4012');
  });
});
