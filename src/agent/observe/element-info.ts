import type { ElementHandle, Locator } from 'playwright-core';
import { STATE_KEY, type ElementInfo } from '../../browser/page-elements';
import { describeInPage } from './page-script';

export type { ElementInfo };

/** Role and label of an element by the observation's rules, and whether what is typed into it is secret. */
export async function describeElement(element: Locator | ElementHandle, timeoutMs = 2_000): Promise<ElementInfo> {
  // A handle is the element itself; a locator finds it again first (within timeoutMs).
  if (!('count' in element)) return element.evaluate(describeInPage as (el: Node, key: string) => ElementInfo, STATE_KEY);
  return element.evaluate(describeInPage, STATE_KEY, { timeout: timeoutMs });
}

/** `button "Send"`: how summaries and action targets name an element. */
export const elementName = (info: ElementInfo): string => `${info.role} "${info.label.replace(/"/g, '\\"')}"`;
