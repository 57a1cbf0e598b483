import type { Frame, Locator, Page } from 'playwright-core';
import { TaskFailure } from '../../contracts/errors';
import { indexSelector } from './marker';
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

/** A frame that goes away while it is searched simply holds no match. */
async function countIn(locator: Locator): Promise<number> {
  try {
    return await locator.count();
  } catch (err) {
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return 0;
  }
}
