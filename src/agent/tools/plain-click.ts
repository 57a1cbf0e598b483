/**
 * The plain click: when the element is plainly clickable, the mouse clicks the centre of its
 * box, without Playwright's actionability checks, which cost about ten DevTools round trips
 * and several animation frames of the renderer per click. Plainly clickable: in the page's main frame, connected,
 * not disabled, visible with a box, neither it nor any element above it animating, and on
 * top at the centre of its box once it is in view (the point the click goes to). Anything
 * else takes the checked click, whose waits and messages say what stands in the way.
 */
import type { ElementHandle, Frame } from 'playwright-core';

/** Where the element may be clicked at once (the centre of its box in the viewport, once it is scrolled into view), or null. */
export async function plainlyClickable(handle: ElementHandle, frame: Frame): Promise<{ x: number; y: number } | null> {
  if (frame !== frame.page().mainFrame()) return null;
  return handle.evaluate(clickableInPage as (el: Node) => { x: number; y: number } | null).catch(() => null);
}

/**
 * The click at that point: the mouse moved there, pressed and released, three DevTools
 * messages (an element handle's click takes about ten, and twice the renderer's time).
 */
export async function clickAt(frame: Frame, point: { x: number; y: number }): Promise<void> {
  await frame.page().mouse.click(point.x, point.y);
}

/** Runs in the page: the checks above, on the element itself. */
export function clickableInPage(el: Element): { x: number; y: number } | null {
  if (!el.isConnected) return null;
  if ((el as HTMLButtonElement).disabled || el.closest('fieldset[disabled]') || el.getAttribute('aria-disabled') === 'true') return null;
  const style = getComputedStyle(el);
  if (style.visibility !== 'visible' || style.pointerEvents === 'none') return null;
  for (let node: Element | null = el; node; node = node.parentElement) {
    if (node.getAnimations().some((animation) => animation.playState === 'running')) return null;
  }
  let box = el.getBoundingClientRect();
  if (box.width < 1 || box.height < 1) return null;
  if (box.top < 0 || box.left < 0 || box.bottom > innerHeight || box.right > innerWidth) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    box = el.getBoundingClientRect();
  }
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return null;
  let hit = document.elementFromPoint(x, y);
  // Into open shadow roots, down to the innermost element at that point.
  while (hit?.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  // The hit element is the target or inside it (across shadow roots).
  for (let node: Node | null = hit; node; node = node.parentNode ?? (node as ShadowRoot).host ?? null) {
    if (node === el) return { x, y };
  }
  return null;
}
