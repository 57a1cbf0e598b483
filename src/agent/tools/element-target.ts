import type { ElementHandle, Frame, Locator } from 'playwright-core';
import { describeElement, elementName, type ElementInfo } from '../observe/element-info';
import { isPageCrash, pageCrashFailure } from '../observe/page-errors';
import { resolveHandleIn } from '../observe/resolve';
import { describeForRecording, readInPage, recordedDescription, type PageSide } from '../../recording/describe';
import { STATE_KEY } from '../observe/marker';
import { describeInPage } from '../observe/page-script';
import type { ToolContext } from '../types';
import { abortable } from './abort';

/** Short, so that a bad action fails fast and the model can try something else. */
export const ACTION_TIMEOUT_MS = 5_000;

export interface ElementTarget {
  locator: Locator;
  /** The frame the element is in. */
  frame: Frame;
  info: ElementInfo;
  /** `button "Send"`: the action event's target, never a typed value. */
  target: string;
  /** `[3] button "Send"`: how summaries name it. */
  name: string;
}

/**
 * The element an action works on, found by its observation index (ELEMENT_NOT_FOUND when gone).
 * Its descriptions are read through one handle on it: a locator finds the element again for
 * every call (about 8 ms each on a page of 1,600 elements), a handle does not. `keepHandle`:
 * the handle is returned, and the caller disposes of it; otherwise it is disposed of here.
 */
export async function targetElement(ctx: ToolContext, index: number, opts: { keepHandle?: boolean } = {}): Promise<ElementTarget & { handle?: ElementHandle }> {
  const found = ctx.pinned ? { ...ctx.pinned, handle: await pinnedHandle(ctx) } : await abortable(resolveHandleIn(ctx.page, index), ctx.signal);
  const { locator, frame, handle } = found;
  let kept = false;
  try {
    let info: ElementInfo;
    let recorded: PageSide | undefined;
    try {
      // Through a handle, both descriptions in one page call.
      if (handle && ctx.record) ({ info, side: recorded } = await abortable(handle.evaluate(describeAndRead, STATE_KEY), ctx.signal));
      else info = await abortable(describeElement(handle ?? locator), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (isPageCrash(err)) throw pageCrashFailure(err);
      // Described or not, the action itself will tell whether the element can be used.
      info = { role: 'element', label: '', secret: false, tag: '', inputType: '' };
    }
    if (ctx.record) ctx.record.element = recorded ? recordedDescription(recorded, frame, info) : await abortable(describeForRecording(handle ?? locator, frame, info), ctx.signal);
    const target = elementName(info);
    kept = !!opts.keepHandle && !!handle;
    return { locator, frame, info, target, name: `[${index}] ${target}`, ...(kept ? { handle: handle! } : {}) };
  } finally {
    if (!kept) void handle?.dispose().catch(() => undefined);
  }
}

/**
 * The observation's description and the recording's of one element, in one page call: both
 * page functions declare everything they use inside, so their sources compose into one.
 */
const describeAndRead = new Function(`return (el, key) => ({ info: (${describeInPage.toString()})(el, key), side: (${readInPage.toString()})(el) });`)() as (el: Node, key: string) => { info: ElementInfo; side: PageSide };

/** A replayed step's element (found again by its description) as a handle, or null. */
async function pinnedHandle(ctx: ToolContext): Promise<ElementHandle | null> {
  return abortable(ctx.pinned!.locator.elementHandle({ timeout: 2_000 }), ctx.signal).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return null;
  });
}
