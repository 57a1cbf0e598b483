import { INDEX_ATTRIBUTE, STATE_KEY } from '../browser/page-elements';
import type { CDPSession, Frame, Page } from 'playwright-core';
import type { Logger } from '../logger';
import type { BlobStore } from '../contracts/profiles';
import type { FilesRepository } from '../store/files.repository';
import { putWholeManyWithinQuota, type StorageQuota } from '../store/storage-quota';
import type { StepOwner, StepPictureSource, StepShot } from './recorder';
import { paintOverJpeg, type Rect } from './paint-over';

/** JPEG quality of a step's picture: enough to see what happened, small enough to keep for every step. */
const QUALITY = 50;
/** The record page shows pictures at most this wide: they are captured at this size, not larger. */
export const PICTURE_WIDTH = 640;
const SHOT_TIMEOUT_MS = 2_000;
/** A picture is never larger than this (a viewport at quality 50 is far below). */
const MAX_PICTURE_BYTES = 2 * 1024 * 1024;

interface RoundEntry {
  owner: StepOwner;
  shots: { seq: number; jpeg: Buffer }[];
  resolve: (files: Map<number, string>) => void;
  reject: (err: unknown) => void;
}

/** One DevTools session per page for its pictures, opened on first use. */
const sessions = new WeakMap<Page, Promise<CDPSession>>();

const COVER_ATTRIBUTE = 'data-agent-cover';
/** Sessions whose last picture is remembered (far more than a worker holds). */
const REMEMBERED_SESSIONS = 5_000;
const WATCH_KEY = '__agentPictureWatch';

interface PictureScriptArgs {
  /**
   * 'look': the view's signature, then (unless it equals `previous`, or `cover` is false) the
   * secret fields covered; 'cover' / 'uncover': the boxes only; 'rects': where the secret
   * fields are, nothing changed.
   */
  mode: 'look' | 'cover' | 'uncover' | 'rects';
  watchKey: string;
  stateKey: string;
  attr: string;
  ignore: string[];
  previous?: string | null;
  cover?: boolean;
}

/**
 * Runs in a frame, in one call per picture where it can: the view's signature (what the
 * viewport shows, as a string that changes when it may have changed: the document, the
 * address, the scroll position, the viewport size, and a count of DOM changes, input,
 * scrolling and focus since the watcher was installed in this document; the service's own
 * marks are not changes), and black boxes over every field that holds or held a secret
 * (password fields, fields the observation took for secret, fields a secret was typed into).
 * Answers the signature (in 'look'), how many boxes it put up (-1: none asked for) and where
 * the secret fields are in the frame's viewport (painted over in the picture as well).
 */
function pictureScript(a: PictureScriptArgs): FrameAnswer {
  const signature = (): string => {
    const holder = window as unknown as Record<string, { id: string; changes: number } | undefined>;
    let watch = holder[a.watchKey];
    if (!watch) {
      // The id tells this document from another at the same address (a reload starts at 0 again).
      const counter = { id: Math.random().toString(36).slice(2), changes: 0 };
      holder[a.watchKey] = watch = counter;
      const ours = (node: Node) => node instanceof Element && a.ignore.some((attr) => node.hasAttribute(attr));
      new MutationObserver((records) => {
        for (const r of records) {
          if (r.type === 'attributes' && a.ignore.includes(r.attributeName ?? '')) continue;
          if (ours(r.target) || (r.type === 'childList' && [...Array.from(r.addedNodes), ...Array.from(r.removedNodes)].every(ours))) continue;
          counter.changes++;
          return;
        }
      }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      for (const type of ['input', 'change', 'scroll', 'resize', 'focusin', 'focusout', 'load']) addEventListener(type, () => counter.changes++, true);
    }
    return [watch.id, location.href, scrollX, scrollY, innerWidth, innerHeight, document.readyState, watch.changes].join('|');
  };
  const secretRects = (): Rect[] => {
    const state = (window as unknown as Record<string, { secrets?: WeakSet<Element>; describe?: (el: Element) => { secret: boolean } } | undefined>)[a.stateKey];
    const rects: Rect[] = [];
    const collect = (root: Document | ShadowRoot): void => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        if (el.shadowRoot) collect(el.shadowRoot);
        if (!el.matches('input, textarea, [contenteditable]:not([contenteditable="false"])')) continue;
        let secret = (el as HTMLInputElement).type === 'password' || !!state?.secrets?.has(el);
        if (!secret && state?.describe) {
          try {
            secret = state.describe(el).secret;
          } catch {
            secret = false;
          }
        }
        const r = el.getBoundingClientRect();
        if (secret && r.width > 0 && r.height > 0) rects.push({ x: r.left, y: r.top, width: r.width, height: r.height });
      }
    };
    collect(document);
    return rects;
  };
  const cover = (): FrameAnswer => {
    const rects = secretRects();
    for (const r of rects) {
      const box = document.createElement('div');
      box.setAttribute(a.attr, '');
      box.style.cssText = `position:fixed;left:${r.x - 2}px;top:${r.y - 2}px;width:${r.width + 4}px;height:${r.height + 4}px;background:#000;z-index:2147483647;pointer-events:none;`;
      document.documentElement.appendChild(box);
    }
    return { covered: rects.length, rects };
  };
  if (a.mode === 'rects') return { covered: -1, rects: secretRects() };
  for (const old of Array.from(document.querySelectorAll(`[${a.attr}]`))) old.remove();
  if (a.mode === 'uncover') return { covered: 0 };
  if (a.mode === 'cover') return cover();
  const seen = signature();
  return { signature: seen, ...(a.cover && seen !== a.previous ? cover() : { covered: -1 }) };
}

/** A frame's answer: its view's signature, the boxes put up, and its secret fields' rectangles (its own viewport's CSS pixels). */
interface FrameAnswer {
  signature?: string;
  covered: number;
  rects?: Rect[];
}

const scriptArgs = { watchKey: WATCH_KEY, stateKey: STATE_KEY, attr: COVER_ATTRIBUTE, ignore: [INDEX_ATTRIBUTE, COVER_ATTRIBUTE] };

/** A frame's answer, or undefined when it did not answer within a second (or went away). */
async function inFrame(frame: Frame, args: Pick<PictureScriptArgs, 'mode' | 'previous' | 'cover'>): Promise<FrameAnswer | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([frame.evaluate(pictureScript, { ...scriptArgs, ...args }), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 1_000)))]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** What look found: the view's signature, whether the secret fields are covered, the boxes put up, and the fields' rectangles in the page's viewport. */
interface Looked {
  signature: string | null;
  covered?: boolean;
  boxes: number;
  rects: Rect[];
}

/**
 * The page as the step left it: its view's signature (null when it cannot be told: a page
 * with child frames, which draw on their own, or no answer) and, unless the view equals
 * `previous` or `shoot` is false, its secret fields covered ready for the picture: `covered`
 * false when a frame could not be covered (then no picture is taken).
 */
async function look(page: Page, previous: string | null | undefined, shoot: boolean): Promise<Looked> {
  const prefix = `${page.url()}#`;
  if (page.frames().length === 1) {
    // One call: the signature and, when a picture follows, the covers and where they are.
    const answer = await inFrame(page.mainFrame(), { mode: 'look', previous: previous?.startsWith(prefix) ? previous.slice(prefix.length) : null, cover: shoot });
    const signature = answer?.signature ? prefix + answer.signature : null;
    // No answer: no signature, and a page that could not be covered (when a picture was to follow).
    if (!answer) return { signature: null, covered: shoot ? false : undefined, boxes: 0, rects: [] };
    if (answer.covered < 0) return { signature, boxes: 0, rects: [] };
    return { signature, covered: true, boxes: answer.covered, rects: answer.rects ?? [] };
  }
  if (!shoot) return { signature: null, boxes: 0, rects: [] };
  const found = await secretFieldsIn(page, 'cover');
  return { signature: null, covered: found.complete, boxes: found.boxes, rects: found.rects };
}

/**
 * The secret fields of every frame of the page, in the page's viewport: covered with boxes
 * ('cover') or only found ('rects'). `complete` false when a frame that may hold one did not
 * answer, or its place on the page could not be read.
 */
async function secretFieldsIn(page: Page, mode: 'cover' | 'rects'): Promise<{ complete: boolean; boxes: number; rects: Rect[] }> {
  const answers = await Promise.all(
    page.frames().map(async (f) => {
      if (f.isDetached()) return { covered: 0, rects: [] };
      const answer = (await inFrame(f, { mode })) ?? (f.isDetached() ? { covered: 0, rects: [] } : undefined);
      if (!answer?.rects?.length) return answer;
      const offset = await frameOffset(f);
      return offset === undefined ? undefined : { ...answer, rects: offset ? answer.rects.map((r) => ({ ...r, x: r.x + offset.x, y: r.y + offset.y })) : [] };
    }),
  );
  // A frame that went away holds nothing to show; one that does not answer may.
  return { complete: answers.every(Boolean), boxes: answers.reduce((n, x) => n + (x ? Math.max(0, x.covered) : 1), 0), rects: answers.flatMap((x) => x?.rects ?? []) };
}

/**
 * Where a frame's viewport starts in the page's (CSS pixels): inside its frame element's
 * border and padding. null: the frame is not shown (nothing of it to paint over);
 * undefined: it could not be read.
 */
async function frameOffset(frame: Frame): Promise<{ x: number; y: number } | null | undefined> {
  if (!frame.parentFrame()) return { x: 0, y: 0 };
  try {
    const owner = await frame.frameElement();
    try {
      const box = await owner.boundingBox();
      if (!box) return null;
      const inset = await owner.evaluate((node) => {
        const el = node as Element;
        const style = getComputedStyle(el);
        return { x: el.clientLeft + parseFloat(style.paddingLeft || '0'), y: el.clientTop + parseFloat(style.paddingTop || '0') };
      });
      return { x: box.x + inset.x, y: box.y + inset.y };
    } finally {
      await owner.dispose();
    }
  } catch {
    return undefined;
  }
}

/** Takes the boxes away again (in every frame). */
async function uncover(page: Page): Promise<void> {
  await Promise.all(page.frames().map((f) => (f.isDetached() ? undefined : inFrame(f, { mode: 'uncover' }))));
}

/**
 * The viewport as JPEG, straight from DevTools (see capture: Playwright's screenshot waits
 * for fonts and settles animations first, about twice the time), its secret fields covered
 * (by look) and uncovered after when there were any, and painted over in the picture itself
 * where look found them (a field in the top layer paints above any box in the page): a
 * picture never shows a typed secret; a page whose fields could not be covered has no picture.
 */
async function shoot(page: Page, looked: Looked): Promise<StepShot> {
  if (!looked.covered) {
    await uncover(page);
    return { skipped: 'secret_fields' };
  }
  try {
    const shot = await capture(page);
    return { jpeg: paintOverJpeg(shot.jpeg, looked.rects, { cssWidth: shot.viewport.width, cssHeight: shot.viewport.height }, QUALITY) };
  } catch {
    return { skipped: page.isClosed() ? 'no_page' : 'failed' };
  } finally {
    if (looked.boxes > 0) await uncover(page).catch(() => undefined);
  }
}

/**
 * The viewport as the compositor shows it now, scaled to the width the record page shows
 * (PICTURE_WIDTH): the first frame of a screencast started for it and stopped at once.
 * Chromium draws that frame anew when the screencast starts, so it is never older than the
 * call; the compositor scales it, where a scaled screenshot (Page.captureScreenshot with a
 * clip) has the renderer lay out and paint the page again at that scale and back (about 5 ms
 * more of Chromium's CPU per picture, twice the renderer's time). With the viewport's size
 * in CSS pixels, which the picture shows scaled.
 */
async function capture(page: Page): Promise<{ jpeg: Buffer; viewport: { width: number; height: number } }> {
  let session = sessions.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    session.catch(() => sessions.delete(page));
    sessions.set(page, session);
  }
  const cdp = await session;
  const viewport = page.viewportSize() ?? (await page.evaluate(() => ({ width: innerWidth, height: innerHeight })));
  const maxWidth = Math.min(PICTURE_WIDTH, viewport.width);
  const maxHeight = Math.max(1, Math.round((viewport.height * maxWidth) / Math.max(1, viewport.width)));
  let onFrame: (frame: { data: string; sessionId: number }) => void = () => {};
  const frame = new Promise<{ data: string; sessionId: number }>((resolve) => (onFrame = resolve));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('picture timed out')), SHOT_TIMEOUT_MS)));
  cdp.on('Page.screencastFrame', onFrame);
  try {
    await Promise.race([cdp.send('Page.startScreencast', { format: 'jpeg', quality: QUALITY, maxWidth, maxHeight, everyNthFrame: 1 }), timeout]);
    const shot = await Promise.race([frame, timeout]);
    void cdp.send('Page.screencastFrameAck', { sessionId: shot.sessionId }).catch(() => undefined);
    return { jpeg: Buffer.from(shot.data, 'base64'), viewport };
  } finally {
    clearTimeout(timer);
    cdp.off('Page.screencastFrame', onFrame);
    await cdp.send('Page.stopScreencast').catch(() => undefined);
  }
}

/**
 * Where the page's secret fields are now, in its viewport (CSS pixels), to paint over in a
 * screenshot; null when a frame did not tell (then the screenshot is not to be used).
 */
export async function secretFieldRects(page: Page): Promise<Rect[] | null> {
  const found = await secretFieldsIn(page, 'rects');
  return found.complete ? found.rects : null;
}

/**
 * A picture of the viewport after each recorded step: stored as a file of the task's owner
 * (kind `picture`, within the owner's storage quota, expiring like the task's downloads) and
 * named on the step. A page that cannot be shot (closed, crashed, too slow) has no picture.
 * The recorder hands a task's pictures over together, and pictures of one user's tasks that
 * meet are stored together: with one lock, one count and one insert of their records.
 */
export class StepPictures implements StepPictureSource {
  /** Per user: the round that pictures join until it is written, and the write under way. */
  private readonly waiting = new Map<string, RoundEntry[]>();
  private readonly writing = new Map<string, Promise<void>>();

  /** Per session: the task, the signature of the page at its last picture, and whether its last step had one. */
  private readonly last = new Map<string, { taskId: string; signature: string | null; taken: boolean }>();
  /** Per session: the picture being taken, which the next one waits for. */
  private readonly shooting = new Map<string, Promise<void>>();

  constructor(private readonly deps: { files: FilesRepository; blobs: BlobStore; quota: StorageQuota; logger: Logger; pageOf: (sessionId: string) => Page | undefined; cpuShort: () => boolean }) {}

  /**
   * The picture of the page after a step of `taskId`, taken now, or why there is none: a
   * page showing what the task's last picture showed is not shot again, and while the
   * worker's CPU is short every other step is shot.
   */
  shoot(sessionId: string, taskId: string): Promise<StepShot> {
    // One at a time per session, in the order the steps came: each compares with the one before.
    const previous = this.shooting.get(sessionId) ?? Promise.resolve();
    const next = previous.then(() => this.shootNow(sessionId, taskId));
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.shooting.set(sessionId, settled);
    void settled.then(() => {
      if (this.shooting.get(sessionId) === settled) this.shooting.delete(sessionId);
    });
    return next;
  }

  private async shootNow(sessionId: string, taskId: string): Promise<StepShot> {
    const page = this.deps.pageOf(sessionId);
    if (!page || page.isClosed()) {
      this.last.delete(sessionId);
      return { skipped: 'no_page' };
    }
    const before = this.last.get(sessionId);
    const sameTask = before?.taskId === taskId;
    const busy = sameTask && before.taken && this.deps.cpuShort();
    const looked = await look(page, sameTask ? before.signature : null, !busy);
    const { signature } = looked;
    if (sameTask && signature !== null && signature === before.signature) return this.note(sessionId, taskId, signature, false, { skipped: 'unchanged' });
    if (busy) return this.note(sessionId, taskId, before.signature, false, { skipped: 'busy' });
    const shot = await shoot(page, looked);
    return this.note(sessionId, taskId, shot.jpeg ? signature : null, Boolean(shot.jpeg), shot);
  }

  private note(sessionId: string, taskId: string, signature: string | null, taken: boolean, shot: StepShot): StepShot {
    // Most recently used last; sessions that ended without another step fall off the front.
    this.last.delete(sessionId);
    this.last.set(sessionId, { taskId, signature, taken });
    if (this.last.size > REMEMBERED_SESSIONS) this.last.delete(this.last.keys().next().value!);
    return shot;
  }

  /**
   * Stores a task's pictures. Pictures of one user that come while a write of theirs is under
   * way wait for it and are then written together, whatever task they belong to (a group
   * commit): with many sessions stepping at once, one round of the quota lock, the count and
   * the inserts serves many tasks instead of each task taking its own.
   */
  store(owner: StepOwner, shots: { seq: number; jpeg: Buffer }[]): Promise<Map<number, string>> {
    if (!shots.length) return Promise.resolve(new Map());
    const { userId } = owner;
    return new Promise((resolve, reject) => {
      const entry = { owner, shots, resolve, reject };
      const round = this.waiting.get(userId);
      if (round) return void round.push(entry);
      const entries = [entry];
      this.waiting.set(userId, entries);
      // Written after the user's write under way (if any); pictures that come until then join it.
      const done = (this.writing.get(userId) ?? Promise.resolve()).then(() => {
        if (this.waiting.get(userId) === entries) this.waiting.delete(userId);
        return this.writeRound(userId, entries);
      });
      this.writing.set(userId, done);
      void done.finally(() => {
        if (this.writing.get(userId) === done) this.writing.delete(userId);
      });
    });
  }

  /** Writes the pictures of one round (one user, any tasks): one lock and count, one insert of their records. */
  private async writeRound(userId: string, entries: RoundEntry[]): Promise<void> {
    const named = entries.flatMap((e, entry) => e.shots.map((s) => ({ entry, seq: s.seq, jpeg: s.jpeg, filename: `step-${String(s.seq + 1).padStart(3, '0')}.jpg` })));
    try {
      const blobs = await putWholeManyWithinQuota(this.deps, named.map((s) => ({ data: s.jpeg, filename: s.filename })), { contentType: 'image/jpeg', userId, perFile: MAX_PICTURE_BYTES, kind: 'picture' });
      const kept = named.flatMap((s, i) => (blobs[i] ? [{ ...s, blob: blobs[i] }] : []));
      entries.forEach((e, entry) => {
        const left = e.shots.length - kept.filter((k) => k.entry === entry).length;
        if (left) this.deps.logger.info({ sessionId: e.owner.sessionId, taskId: e.owner.taskId, left }, 'step pictures past the storage quota are not kept');
      });
      let records;
      try {
        records = await this.deps.files.createManyFromBlobs(
          kept.map((k) => ({ userId, blob: { ...k.blob, contentType: 'image/jpeg' }, originalName: k.filename, kind: 'picture', sessionId: entries[k.entry].owner.sessionId, taskId: entries[k.entry].owner.taskId })),
        );
      } catch (err) {
        await Promise.all(kept.map((k) => this.deps.blobs.delete(k.blob.blobId).catch(() => undefined)));
        throw err;
      }
      const files = entries.map(() => new Map<number, string>());
      records.forEach((r, i) => files[kept[i].entry].set(kept[i].seq, r._id));
      entries.forEach((e, entry) => e.resolve(files[entry]));
    } catch (err) {
      entries.forEach((e) => e.reject(err));
    }
  }
}
