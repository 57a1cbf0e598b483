/**
 * What a hibernated session's tabs looked like, beyond cookies and storage: each tab's
 * address, its scroll position, and the values typed or chosen in its fields; put back when
 * the session wakes on any worker.
 */
import type { BrowserContext, Page } from 'playwright-core';

/** One field's value, found again by its CSS path. */
export interface FieldValue {
  path: string;
  value?: string;
  checked?: boolean;
}

export interface TabState {
  url: string;
  scroll: { x: number; y: number };
  fields: FieldValue[];
}

export interface PagesState {
  tabs: TabState[];
  /** Which tab the agent was on. */
  active: number;
}

/** At most this many fields per tab, and this many characters of a value, are kept. */
const MAX_FIELDS = 200;
const MAX_VALUE_CHARS = 20_000;
const MAX_TABS = 10;

/** Read in the page: the scroll position and every field whose value differs from the page's own. */
function readTab(limits: { fields: number; chars: number }): { scroll: { x: number; y: number }; fields: FieldValue[] } {
  const pathOf = (el: Element): string => {
    const parts: string[] = [];
    for (let node: Element | null = el; node && node !== document.documentElement; node = node.parentElement) {
      const parent: Element | null = node.parentElement;
      const same = parent ? Array.from(parent.children).filter((c) => c.tagName === node!.tagName) : [];
      parts.unshift(`${node.tagName.toLowerCase()}${same.length > 1 ? `:nth-of-type(${same.indexOf(node) + 1})` : ''}`);
    }
    return parts.join(' > ');
  };
  const fields: FieldValue[] = [];
  for (const el of Array.from(document.querySelectorAll('input, textarea, select'))) {
    if (fields.length >= limits.fields) break;
    if (el instanceof HTMLInputElement) {
      if (['hidden', 'file', 'submit', 'button', 'image', 'reset'].includes(el.type)) continue;
      if (el.type === 'checkbox' || el.type === 'radio') {
        if (el.checked !== el.defaultChecked) fields.push({ path: pathOf(el), checked: el.checked });
      } else if (el.value !== el.defaultValue) fields.push({ path: pathOf(el), value: el.value.slice(0, limits.chars) });
    } else if (el instanceof HTMLTextAreaElement) {
      if (el.value !== el.defaultValue) fields.push({ path: pathOf(el), value: el.value.slice(0, limits.chars) });
    } else if (el instanceof HTMLSelectElement) {
      const initial = Array.from(el.options).find((o) => o.defaultSelected) ?? el.options[0];
      if (el.value !== (initial?.value ?? '')) fields.push({ path: pathOf(el), value: el.value });
    }
  }
  return { scroll: { x: window.scrollX, y: window.scrollY }, fields };
}

/**
 * Put back in the page, only while it shows the origin the values were read from (checked in
 * the same call that writes them): each field's value (with the events a person's typing
 * fires), then the scroll position. -1: another origin, nothing written.
 */
function writeTab(state: { origin: string; scroll: { x: number; y: number }; fields: FieldValue[] }): number {
  if (location.origin !== state.origin) return -1;
  let restored = 0;
  for (const field of state.fields) {
    const el = document.querySelector(field.path);
    if (!el) continue;
    if (el instanceof HTMLInputElement && field.checked !== undefined) el.checked = field.checked;
    else if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) && field.value !== undefined) el.value = field.value;
    else continue;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    restored += 1;
  }
  window.scrollTo(state.scroll.x, state.scroll.y);
  return restored;
}

/** A tab whose saved values were not put back: the page it was read from, and what it shows now. */
export interface UnrestoredTab {
  url: string;
  now: string;
}

/** What the model is told of tabs whose form values were not put back. */
export function unrestoredNote(tabs: UnrestoredTab[]): string {
  const lines = tabs.map((t) => `- ${t.url}: the tab now shows ${t.now}`);
  return `The browser was let go while waiting and opened again. The values typed into these pages' forms were not put back, as the pages no longer show the site they were typed on; type them again where needed:\n${lines.join('\n')}`;
}

const originOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
};

/** The session's tabs as they are now (http(s) pages only). */
export async function readPages(context: BrowserContext, active: Page): Promise<PagesState> {
  const tabs: TabState[] = [];
  let activeIndex = 0;
  for (const page of context.pages().slice(0, MAX_TABS)) {
    const url = page.url();
    if (!/^https?:/.test(url)) continue;
    const read = await page.evaluate(readTab, { fields: MAX_FIELDS, chars: MAX_VALUE_CHARS }).catch(() => ({ scroll: { x: 0, y: 0 }, fields: [] as FieldValue[] }));
    if (page === active) activeIndex = tabs.length;
    tabs.push({ url, ...read });
  }
  return { tabs, active: activeIndex };
}

/**
 * Opens the saved tabs in a restored context whose first page already shows the first tab's
 * address, puts back their fields and scroll positions where a tab shows the origin they were
 * read from, and answers the page to act on and the tabs whose fields were not put back.
 */
export async function writePages(context: BrowserContext, first: Page, state: PagesState, timeoutMs = 30_000): Promise<{ page: Page; unrestored: UnrestoredTab[] }> {
  const pages: Page[] = [];
  const unrestored: UnrestoredTab[] = [];
  for (const [i, tab] of state.tabs.entries()) {
    const page = i === 0 ? first : await context.newPage();
    if (i > 0 || page.url() !== tab.url) await page.goto(tab.url, { waitUntil: 'domcontentloaded', timeout: timeoutMs }).catch(() => undefined);
    const written = await page.evaluate(writeTab, { origin: originOf(tab.url), scroll: tab.scroll, fields: tab.fields }).catch(() => -1);
    if (written < 0 && tab.fields.length) unrestored.push({ url: tab.url, now: page.url() });
    pages.push(page);
  }
  return { page: pages[state.active] ?? first, unrestored };
}
