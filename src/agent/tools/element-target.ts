import type { Locator } from 'playwright-core';
import { describeElement, elementName, type ElementInfo } from '../observe/element-info';
import { isPageCrash, pageCrashFailure } from '../observe/page-errors';
import { resolveElementIn } from '../observe/resolve';
import { describeForRecording } from '../../recording/describe';
import type { ToolContext } from '../types';
import { abortable } from './abort';

/** Short, so that a bad action fails fast and the model can try something else. */
export const ACTION_TIMEOUT_MS = 5_000;

export interface ElementTarget {
  locator: Locator;
  info: ElementInfo;
  /** `button "Send"`: the action event's target, never a typed value. */
  target: string;
  /** `[3] button "Send"`: how summaries name it. */
  name: string;
}

/** The element an action works on, found by its observation index (ELEMENT_NOT_FOUND when gone). */
export async function targetElement(ctx: ToolContext, index: number): Promise<ElementTarget> {
  const { locator, frame } = ctx.pinned ?? (await abortable(resolveElementIn(ctx.page, index), ctx.signal));
  let info: ElementInfo;
  try {
    info = await abortable(describeElement(locator), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (isPageCrash(err)) throw pageCrashFailure(err);
    // Described or not, the action itself will tell whether the element can be used.
    info = { role: 'element', label: '', secret: false, tag: '', inputType: '' };
  }
  if (ctx.record) ctx.record.element = await abortable(describeForRecording(locator, frame, info), ctx.signal);
  const target = elementName(info);
  return { locator, info, target, name: `[${index}] ${target}` };
}
