import type { ElementHandle, Frame, Locator } from 'playwright-core';
import { elementName, type ElementInfo } from '../observe/element-info';
import { isPageCrash, pageCrashFailure } from '../observe/page-errors';
import { findInPage, resolveHandleIn } from '../observe/resolve';
import { indexSelector, STATE_KEY } from '../../browser/page-elements';
import { readInPage, recordedDescription, type PageSide } from '../../recording/describe';
import { describeInPage } from '../observe/page-script';
import type { ToolContext } from '../types';
import { abortable } from './abort';
import { clickableInPage, plainlyClickable } from './plain-click';

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

/** Where a click may go at once (plain-click.ts), or null: the checked click then. */
type ClickPoint = { x: number; y: number } | null;

/**
 * The element an action works on, found by its observation index (ELEMENT_NOT_FOUND when gone).
 * In the main frame one page call finds it, describes it (for the model and the recording) and,
 * with `clickPoint`, checks where it may be plainly clicked: no handle, which would cost a
 * DevTools call for Playwright's preview of it and one to release it. Elsewhere (a child frame,
 * a replayed step's element) its descriptions are read through one handle on it: a locator
 * finds the element again for every call (about 8 ms each on a page of 1,600 elements).
 */
export async function targetElement(ctx: ToolContext, index: number, opts: { clickPoint?: boolean } = {}): Promise<ElementTarget & { point: ClickPoint }> {
  const main = ctx.page.mainFrame();
  const sighted = ctx.pinned ? null : await sightInMainFrame(ctx, index, !!opts.clickPoint);
  if (sighted) return { locator: main.locator(indexSelector(index)).first(), frame: main, ...named(ctx, index, main, sighted.info, sighted.side), point: sighted.point };
  const found = ctx.pinned ? { ...ctx.pinned, handle: await pinnedHandle(ctx) } : await abortable(resolveHandleIn(ctx.page, index, main), ctx.signal);
  const { locator, frame, handle } = found;
  try {
    let seen: Seen | null = null;
    try {
      // Both descriptions in one page call, through the handle (or the locator, within 2 s).
      const args = { key: STATE_KEY, read: !!ctx.record, check: false };
      seen = await abortable(handle ? handle.evaluate(seeInPage, args) : locator.evaluate(seeInPage, args, { timeout: 2_000 }), ctx.signal);
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (isPageCrash(err)) throw pageCrashFailure(err);
    }
    const point = opts.clickPoint && handle ? await abortable(plainlyClickable(handle, frame), ctx.signal) : null;
    return { locator, frame, ...named(ctx, index, frame, seen?.info, seen?.side), point };
  } finally {
    void handle?.dispose().catch(() => undefined);
  }
}

/** Described or not, the action itself will tell whether the element can be used. */
const UNDESCRIBED: ElementInfo = { role: 'element', label: '', secret: false, tag: '', inputType: '' };

/** The element's names, and its description for the recording when one was read. */
function named(ctx: ToolContext, index: number, frame: Frame, described: ElementInfo | null | undefined, side: PageSide | null | undefined): Omit<ElementTarget, 'locator' | 'frame'> {
  const info = described ?? UNDESCRIBED;
  if (ctx.record && side) ctx.record.element = recordedDescription(side, frame, info);
  const target = elementName(info);
  return { info, target, name: `[${index}] ${target}` };
}

/**
 * The main frame's element numbered `index`, found, described and (with `check`) checked for a
 * plain click in one page call; null when the main frame holds none or was replaced during the
 * call (the frames are then searched one by one).
 */
async function sightInMainFrame(ctx: ToolContext, index: number, check: boolean): Promise<Seen | null> {
  if (!Number.isInteger(index) || index <= 0) return null;
  try {
    return await abortable(ctx.page.mainFrame().evaluate(sightInPage, { sel: indexSelector(index), key: STATE_KEY, read: !!ctx.record, check }), ctx.signal);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return null;
  }
}

/** What one page call learns of an element: its descriptions (for the model and the recording) and where it may be plainly clicked. */
interface Seen {
  info: ElementInfo | null;
  side: PageSide | null;
  point: ClickPoint;
}

/**
 * Runs in the page on the element: the observation's description, the recording's (`read`)
 * and the plain click's check (`check`). The page functions declare everything they use
 * inside, so their sources compose into one. A description that fails in the page is left
 * out (the action tells whether the element can be used); the check comes last, as it may
 * scroll the element into view.
 */
const seeInPage = new Function(`return (el, { key, read, check }) => {
  const attempt = (f) => { try { return f(); } catch { return null; } };
  return {
    info: attempt(() => (${describeInPage.toString()})(el, key)),
    side: read ? attempt(() => (${readInPage.toString()})(el)) : null,
    point: check ? attempt(() => (${clickableInPage.toString()})(el)) : null,
  };
};`)() as (el: Node, args: { key: string; read: boolean; check: boolean }) => Seen;

/** The page function of `sightInMainFrame`: the element found in the document (or null), then seen. */
const sightInPage = new Function(`return ({ sel, key, read, check }) => {
  const el = (${findInPage.toString()})(document, sel);
  return el ? (${seeInPage.toString()})(el, { key, read, check }) : null;
};`)() as (args: { sel: string; key: string; read: boolean; check: boolean }) => Seen | null;

/** A replayed step's element (found again by its description) as a handle, or null. */
async function pinnedHandle(ctx: ToolContext): Promise<ElementHandle | null> {
  return abortable(ctx.pinned!.locator.elementHandle({ timeout: 2_000 }), ctx.signal).catch((err: unknown) => {
    if (ctx.signal.aborted) throw err;
    if (isPageCrash(err)) throw pageCrashFailure(err);
    return null;
  });
}
