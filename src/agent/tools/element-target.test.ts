import { chromium, type Browser, type Page } from 'playwright-core';
import { INDEX_ATTRIBUTE } from '../../browser/page-elements';
import type { ToolContext } from '../types';
import { targetElement } from './element-target';

let browser: Browser;
let page: Page;

// Numbered as an observation numbers them: a button in the page, one in an open shadow root,
// one under a cover, and one in a child frame.
const PAGE = `<!doctype html><body style="margin:0">
<button ${INDEX_ATTRIBUTE}="1" style="position:absolute;left:100px;top:50px;width:80px;height:30px">Pay now</button>
<div id="host"></div>
<button ${INDEX_ATTRIBUTE}="3" style="position:absolute;left:100px;top:200px;width:80px;height:30px">Hidden</button>
<div style="position:absolute;left:90px;top:190px;width:120px;height:60px;background:#fff"></div>
<iframe style="position:absolute;left:400px;top:50px" srcdoc="<button ${INDEX_ATTRIBUTE}=&quot;4&quot;>In the frame</button>"></iframe>
<script>
  document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
    '<button ${INDEX_ATTRIBUTE}="2" style="position:absolute;left:100px;top:120px;width:80px;height:30px">Shadow</button>';
</script>
</body>`;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  page = await (await browser.newContext({ viewport: { width: 1024, height: 600 } })).newPage();
  await page.setContent(PAGE);
  await page.frames()[1].waitForSelector('button');
});
afterAll(async () => {
  await browser?.close();
});

const ctxOf = (record?: ToolContext['record']): ToolContext => ({ page, context: page.context(), setActivePage: () => undefined, navigationTimeoutMs: 5_000, signal: new AbortController().signal, record });

describe('targetElement', () => {
  it('finds, describes and checks an element of the main frame in one page call, without a handle', async () => {
    const handles = jest.spyOn(page.mainFrame(), 'evaluateHandle');
    const evaluations = jest.spyOn(page.mainFrame(), 'evaluate');
    const record: ToolContext['record'] = {};
    try {
      const found = await targetElement(ctxOf(record), 1, { clickPoint: true });
      expect(found.frame).toBe(page.mainFrame());
      expect(found.name).toBe('[1] button "Pay now"');
      expect(found.point).toEqual({ x: 140, y: 65 });
      expect(record.element).toMatchObject({ role: 'button', name: 'Pay now' });
      expect(await found.locator.textContent()).toBe('Pay now');
      expect(evaluations).toHaveBeenCalledTimes(1);
      expect(handles).not.toHaveBeenCalled();
    } finally {
      handles.mockRestore();
      evaluations.mockRestore();
    }
  });

  it('finds one in an open shadow root the same way', async () => {
    const found = await targetElement(ctxOf(), 2, { clickPoint: true });
    expect(found.name).toBe('[2] button "Shadow"');
    expect(found.point).toEqual({ x: 140, y: 135 });
  });

  it('gives no click point for a covered element, which takes the checked click; without clickPoint it does not check', async () => {
    const covered = await targetElement(ctxOf(), 3, { clickPoint: true });
    expect(covered.name).toBe('[3] button "Hidden"');
    expect(covered.point).toBeNull();
    expect((await targetElement(ctxOf(), 1)).point).toBeNull();
  });

  it('finds an element in a child frame through a handle there, with no click point', async () => {
    const record: ToolContext['record'] = {};
    const found = await targetElement(ctxOf(record), 4, { clickPoint: true });
    expect(found.frame).toBe(page.frames()[1]);
    expect(found.name).toBe('[4] button "In the frame"');
    expect(found.point).toBeNull();
    expect(record.element).toMatchObject({ role: 'button', name: 'In the frame', frame: expect.any(Object) });
  });

  it('answers ELEMENT_NOT_FOUND for an index no frame holds', async () => {
    await expect(targetElement(ctxOf(), 99, { clickPoint: true })).rejects.toMatchObject({ code: 'ELEMENT_NOT_FOUND' });
  });
});
