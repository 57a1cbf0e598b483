import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startFixtureServer } from '../../../test/support/fixtures-server';
import { clickAt, plainlyClickable } from './plain-click';

let browser: Browser;
let server: { url: string; close(): Promise<void> };
let page: Page;

beforeAll(async () => {
  [browser, server] = await Promise.all([
    chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] }),
    startFixtureServer(path.resolve(__dirname, '../../../test/fixtures')),
  ]);
  page = await (await browser.newContext({ viewport: { width: 1024, height: 600 } })).newPage();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function clickable(selector: string): Promise<boolean> {
  const handle = (await page.locator(selector).elementHandle())!;
  try {
    return (await plainlyClickable(handle, page.mainFrame())) !== null;
  } finally {
    await handle.dispose();
  }
}

describe('plainlyClickable', () => {
  beforeEach(async () => {
    await page.goto(`${server.url}/click-cases.html`);
  });

  it('takes a visible, enabled, still button on top', async () => {
    expect(await clickable('#plain')).toBe(true);
  });

  it('leaves to the checked click a disabled one, one without pointer events, a moving one and a covered one', async () => {
    expect(await clickable('#off')).toBe(false);
    expect(await clickable('#ghost')).toBe(false);
    expect(await clickable('#moving')).toBe(false);
    expect(await clickable('#covered')).toBe(false);
  });

  it('answers the centre of the box, where the mouse then clicks the button', async () => {
    const handle = (await page.locator('#plain').elementHandle())!;
    const point = (await plainlyClickable(handle, page.mainFrame()))!;
    const box = (await handle.boundingBox())!;
    expect(point.x).toBeCloseTo(box.x + box.width / 2, 3);
    expect(point.y).toBeCloseTo(box.y + box.height / 2, 3);
    await handle.evaluate((el) => el.addEventListener('click', () => ((window as unknown as { clicked: number }).clicked = ((window as unknown as { clicked?: number }).clicked ?? 0) + 1)));
    await clickAt(page.mainFrame(), point);
    expect(await page.evaluate(() => (window as unknown as { clicked?: number }).clicked)).toBe(1);
    await handle.dispose();
  });

  it('scrolls a button below the fold into view first, then takes it', async () => {
    expect(await page.evaluate(() => scrollY)).toBe(0);
    expect(await clickable('#far')).toBe(true);
    expect(await page.evaluate(() => scrollY)).toBeGreaterThan(1000);
  });

  it('takes a button in an open shadow root, whose point hits an element inside it', async () => {
    expect(await clickable('#host >> button')).toBe(true);
  });

  it('leaves elements in frames to the checked click', async () => {
    await page.setContent(`<iframe srcdoc="<button>In frame</button>"></iframe>`);
    const frame = page.frames()[1];
    await frame.waitForSelector('button');
    const handle = (await frame.$('button'))!;
    expect(await plainlyClickable(handle, frame)).toBeNull();
    await handle.dispose();
  });
});
