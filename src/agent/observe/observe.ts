import type { Frame, JSHandle, Page } from 'playwright-core';
import type { Observation, ObserveOptions } from '../types';
import { composeObservation, estimateTokens, NEARBY_VIEWPORTS, type ComposeInput } from './compose';
import { INDEX_ATTRIBUTE, STATE_KEY } from '../../browser/page-elements';
import { isContextLost, isPageCrash, pageCrashFailure } from './page-errors';
import { paintOverJpeg } from '../../recording/paint-over';
import { secretFieldRects } from '../../recording/pictures';
import { snapshotFrame, type FrameSnapshot, type Region, type SnapshotArgs } from './page-script';

/** The next free element index of each page: frames number after each other so indices never collide. */
const nextIndex = new WeakMap<Page, number>();

const MAIN_FRAME_TIMEOUT_MS = 10_000;
const CHILD_FRAME_TIMEOUT_MS = 2_000;
const TAB_TITLE_TIMEOUT_MS = 1_000;
const SCREENSHOT_TIMEOUT_MS = 10_000;
/** JPEG quality of the screenshot a vision model is sent. */
const SCREENSHOT_QUALITY = 80;
const ATTEMPTS = 3;

/** What the agent sees of `page`: its interactive elements with stable indices and its visible text, within the token budget. */
export async function observePage(page: Page, opts: ObserveOptions): Promise<Observation> {
  try {
    return await observe(page, opts);
  } catch (err) {
    if (isPageCrash(err)) throw pageCrashFailure(err);
    throw err;
  }
}

async function observe(page: Page, opts: ObserveOptions): Promise<Observation> {
  const main = await snapshotMainFrame(page);
  let next = main.nextIndex;
  const elements = [...main.elements];
  const farAway = { ...main.farAway };
  const text = [...main.text];
  let { textAbove, textBelow } = main;
  const textBelowLines = [...main.textBelowLines];

  const viewportRegion: Region = { top: 0, left: 0, bottom: main.viewport.height, right: main.viewport.width };
  // Frames come parent first; a frame is observed only when its parent was and its iframe is shown.
  const observed = new Map<Frame, FrameSnapshot>([[page.mainFrame(), main]]);
  for (const frame of page.frames()) {
    const parent = frame.parentFrame();
    const parentSnapshot = parent && observed.get(parent);
    if (!parentSnapshot || frame.isDetached()) continue;
    const snapshot = await snapshotChildFrame(frame, parentSnapshot.modal !== null, viewportRegion, next);
    if (!snapshot) continue;
    observed.set(frame, snapshot);
    next = snapshot.nextIndex;
    elements.push(...snapshot.elements);
    for (const position of ['above', 'below', 'side'] as const) farAway[position] += snapshot.farAway[position];
    text.push(...snapshot.text);
    textAbove += snapshot.textAbove;
    textBelow += snapshot.textBelow;
    textBelowLines.push(...snapshot.textBelowLines);
  }
  nextIndex.set(page, next);

  const [tabs, screenshot] = await Promise.all([listTabs(page, main.title), opts.screenshot ? takeScreenshot(page) : undefined]);
  const input: ComposeInput = {
    url: page.url(),
    title: main.title,
    tabs,
    viewport: main.viewport,
    paneScrolls: main.paneScrolls,
    modal: main.modal,
    blockedByModal: main.blockedByModal,
    elements,
    farAway,
    text,
    textAbove,
    textBelow,
    textBelowLines,
  };
  const composed = composeObservation(input, opts.tokenBudget);
  return {
    url: input.url,
    title: input.title,
    tabs,
    text: composed,
    elementCount: elements.length + farAway.above + farAway.below + farAway.side,
    tokens: estimateTokens(composed),
    ...(screenshot ? { screenshot } : {}),
  };
}

function snapshotArgs(page: Page, next: number, region: Region | null, restartOnNewDocument: boolean): SnapshotArgs {
  const height = page.viewportSize()?.height ?? 1080;
  return { stateKey: STATE_KEY, indexAttribute: INDEX_ATTRIBUTE, nextIndex: next, restartOnNewDocument, region, describeWithin: NEARBY_VIEWPORTS * height };
}

type Snapshotter = (args: SnapshotArgs) => string;
/** The page script, made a function in a frame's document once instead of being sent (23 KB) and compiled with every observation. */
const SNAPSHOT_SOURCE = `(${snapshotFrame.toString()})`;
const snapshotters = new WeakMap<Frame, Promise<JSHandle<Snapshotter>>>();

/** Reads a frame's document with the page script, made in that document on first use and again after it was replaced. */
async function snapshotIn(frame: Frame, args: SnapshotArgs): Promise<string> {
  const made = snapshotters.get(frame);
  if (made) {
    try {
      return await (await made).evaluate((snapshot, snapshotArgs) => snapshot(snapshotArgs), args);
    } catch (err) {
      // The document it was made in is gone (a navigation, perhaps during this read): the
      // handle is let go, and the new document is read once it is parsed.
      if (!isContextLost(err)) throw err;
      if (snapshotters.get(frame) === made) {
        snapshotters.delete(frame);
        made.then((handle) => handle.dispose()).catch(() => undefined);
      }
      await frame.waitForLoadState('domcontentloaded', { timeout: 5_000 }).catch(() => undefined);
    }
  }
  // Made once per document, also when two reads of the frame meet here.
  let making = snapshotters.get(frame);
  if (!making) {
    const created = frame.evaluateHandle<Snapshotter>(SNAPSHOT_SOURCE);
    snapshotters.set(frame, created);
    created.catch(() => {
      if (snapshotters.get(frame) === created) snapshotters.delete(frame);
    });
    making = created;
  }
  return (await making).evaluate((snapshot, snapshotArgs) => snapshot(snapshotArgs), args);
}

/** The main document may be replaced while it is read (a navigation just started): read the new one. */
async function snapshotMainFrame(page: Page): Promise<FrameSnapshot> {
  for (let attempt = 1; ; attempt++) {
    try {
      const args = snapshotArgs(page, nextIndex.get(page) ?? 1, null, true);
      const json = await withTimeout(snapshotIn(page.mainFrame(), args), MAIN_FRAME_TIMEOUT_MS, 'The page did not answer while being observed');
      return JSON.parse(json) as FrameSnapshot;
    } catch (err) {
      if (attempt >= ATTEMPTS || !isContextLost(err)) throw err;
      await page.waitForLoadState('domcontentloaded', { timeout: 5_000 }).catch(() => undefined);
    }
  }
}

/**
 * Observes an iframe's document, seen through the part of the iframe inside the viewport.
 * Returns null for frames the user cannot use: hidden, behind a modal, gone or unresponsive.
 */
async function snapshotChildFrame(frame: Frame, parentHasModal: boolean, viewport: Region, next: number): Promise<FrameSnapshot | null> {
  try {
    const owner = await frame.frameElement();
    const [box, placement] = await Promise.all([
      owner.boundingBox(),
      owner.evaluate(
        (el, key) => {
          const modal = (window as unknown as Record<string, { modal?: Node | null } | undefined>)[key]?.modal;
          let inModal = !modal;
          for (let n: Node | null = el; n && !inModal; n = n.parentNode ?? (n as ShadowRoot).host ?? null) inModal = n === modal;
          return { inModal, dx: (el as Element).clientLeft, dy: (el as Element).clientTop };
        },
        STATE_KEY,
      ),
    ]);
    await owner.dispose();
    if (!box || box.width <= 0 || box.height <= 0) return null;
    if (parentHasModal && !placement.inModal) return null;
    const left = box.x + placement.dx;
    const top = box.y + placement.dy;
    const shown: Region = {
      top: Math.max(viewport.top, top),
      left: Math.max(viewport.left, left),
      bottom: Math.min(viewport.bottom, box.y + box.height),
      right: Math.min(viewport.right, box.x + box.width),
    };
    // An iframe out of view still places its elements above or below the viewport.
    const visible = shown.bottom > shown.top && shown.right > shown.left ? shown : viewport;
    const region: Region = { top: visible.top - top, bottom: visible.bottom - top, left: visible.left - left, right: visible.right - left };
    const json = await withTimeout(snapshotIn(frame, snapshotArgs(frame.page(), next, region, false)), CHILD_FRAME_TIMEOUT_MS, 'frame did not answer');
    return JSON.parse(json) as FrameSnapshot;
  } catch (err) {
    if (isPageCrash(err)) throw err;
    return null;
  }
}

async function listTabs(active: Page, activeTitle: string): Promise<Observation['tabs']> {
  const pages = active.context().pages();
  return Promise.all(
    pages.map(async (page, index) => ({
      index,
      url: page.url(),
      title: page === active ? activeTitle : await withTimeout(page.title(), TAB_TITLE_TIMEOUT_MS, 'no title').catch(() => ''),
      active: page === active,
    })),
  );
}

/**
 * A screenshot is a help, not a must: the observation goes on without one. Its secret fields
 * are painted over in the image, where they were just before and just after it was taken
 * (whatever layer they paint in); a page whose frames do not tell where theirs are gets none.
 */
async function takeScreenshot(page: Page): Promise<string | undefined> {
  try {
    const before = await secretFieldRects(page);
    if (!before) return undefined;
    const shot = await page.screenshot({ type: 'jpeg', quality: SCREENSHOT_QUALITY, timeout: SCREENSHOT_TIMEOUT_MS });
    const after = await secretFieldRects(page);
    if (!after) return undefined;
    const viewport = page.viewportSize() ?? (await page.evaluate(() => ({ width: innerWidth, height: innerHeight })));
    return paintOverJpeg(shot, [...before, ...after], { cssWidth: viewport.width, cssHeight: viewport.height }, SCREENSHOT_QUALITY).toString('base64');
  } catch (err) {
    if (isPageCrash(err)) throw err;
    return undefined;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message} (${ms} ms)`)), ms);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
