import type { ElementHandle, Frame, Locator, Page } from 'playwright-core';
import { TaskFailure } from '../../contracts/errors';
import { indexSelector } from '../../browser/page-elements';
import { isPageCrash, pageCrashFailure } from './page-errors';

/** The element the last observation numbered `index`, in whichever frame it lives (open shadow roots included). */
export async function resolveElement(page: Page, index: number): Promise<Locator> {
  return (await resolveElementIn(page, index)).locator;
}

/** The element and the frame it is in. */
export async function resolveElementIn(page: Page, index: number): Promise<{ locator: Locator; frame: Frame }> {
  if (Number.isInteger(index) && index > 0) {
    const selector = indexSelector(index);
    for (const frame of page.frames()) {
      if (frame.isDetached()) continue;
      const locator = frame.locator(selector);
      // A clone made by the page since the last observation may carry the same index: the first is the original.
      if ((await countIn(locator)) > 0) return { locator: locator.first(), frame };
    }
  }
  throw new TaskFailure('ELEMENT_NOT_FOUND', `No element with index ${index} on the page`, { index });
}

/**
 * The element the last observation numbered `index` as a handle, its frame and a locator of
 * it: one native query per frame (light DOM first, then open shadow roots), where a locator
 * runs Playwright's selector engine over the whole document for each call. `searched`: a frame
 * already searched (without a match), skipped.
 */
export async function resolveHandleIn(page: Page, index: number, searched?: Frame): Promise<{ handle: ElementHandle; locator: Locator; frame: Frame }> {
  if (Number.isInteger(index) && index > 0) {
    const selector = indexSelector(index);
    for (const frame of page.frames()) {
      if (frame.isDetached() || frame === searched) continue;
      const handle = await findIn(frame, selector);
      if (handle) return { handle, locator: frame.locator(selector).first(), frame };
    }
  }
  throw new TaskFailure('ELEMENT_NOT_FOUND', `No element with index ${index} on the page`, { index });
}

async function findIn(frame: Frame, selector: string): Promise<ElementHandle | null> {
  try {
    const found = await frame.evaluateHandle(findInDocument, selector);
    const element = found.asElement();
    if (!element) await found.dispose();
    return element as ElementHandle | null;
  } catch (err) {
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return null; // a frame that goes away while it is searched holds no match
  }
}

/** Runs in the page: the first element matching `sel` in the light DOM, else in open shadow roots (depth first). */
export function findInPage(root: Document | ShadowRoot, sel: string): Element | null {
  const hit = root.querySelector(sel);
  if (hit) return hit;
  const all = root.querySelectorAll('*');
  for (let i = 0; i < all.length; i++) {
    const inner = all[i].shadowRoot ? findInPage(all[i].shadowRoot!, sel) : null;
    if (inner) return inner;
  }
  return null;
}

/** `findInPage` from the document, as a page function: composed from its source (a page function cannot call the service's functions). */
export const findInDocument = new Function(`return (sel) => (${findInPage.toString()})(document, sel);`)() as (sel: string) => Element | null;

/** A frame that goes away while it is searched simply holds no match. */
async function countIn(locator: Locator): Promise<number> {
  try {
    return await locator.count();
  } catch (err) {
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return 0;
  }
}
