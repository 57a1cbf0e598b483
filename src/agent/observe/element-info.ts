import type { Locator } from 'playwright-core';
import { STATE_KEY } from './marker';
import { describeInPage, type ElementInfo } from './page-script';

export type { ElementInfo };

/** Role and label of an element by the observation's rules, and whether what is typed into it is secret. */
export async function describeElement(locator: Locator, timeoutMs = 2_000): Promise<ElementInfo> {
  return locator.evaluate(describeInPage, STATE_KEY, { timeout: timeoutMs });
}

/** `button "Send"`: how summaries and action targets name an element. */
export const elementName = (info: ElementInfo): string => `${info.role} "${info.label.replace(/"/g, '\\"')}"`;
