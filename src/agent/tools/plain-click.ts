/**
 * The plain click: when the element is plainly clickable, Playwright's click is made without
 * its actionability checks, which cost about ten DevTools round trips and several animation
 * frames of the renderer per click. Plainly clickable: in the page's main frame, connected,
 * not disabled, visible with a box, neither it nor any element above it animating, and on
 * top at the centre of its box once it is in view (the point the click goes to). Anything
 * else takes the checked click, whose waits and messages say what stands in the way.
 */
import type { ElementHandle, Frame } from 'playwright-core';

/** Whether the element may be clicked at once (it is scrolled into view when it was not). */
export async function plainlyClickable(handle: ElementHandle, frame: Frame): Promise<boolean> {
  if (frame !== frame.page().mainFrame()) return false;
  return handle.evaluate(clickableInPage as (el: Node) => boolean).catch(() => false);
}

/** Runs in the page: the checks above, on the element itself. */
function clickableInPage(el: Element): boolean {
  if (!el.isConnected) return false;
  if ((el as HTMLButtonElement).disabled || el.closest('fieldset[disabled]') || el.getAttribute('aria-disabled') === 'true') return false;
  const style = getComputedStyle(el);
  if (style.visibility !== 'visible' || style.pointerEvents === 'none') return false;
  for (let node: Element | null = el; node; node = node.parentElement) {
    if (node.getAnimations().some((animation) => animation.playState === 'running')) return false;
  }
  let box = el.getBoundingClientRect();
  if (box.width < 1 || box.height < 1) return false;
  if (box.top < 0 || box.left < 0 || box.bottom > innerHeight || box.right > innerWidth) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    box = el.getBoundingClientRect();
  }
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
  let hit = document.elementFromPoint(x, y);
  // Into open shadow roots, down to the innermost element at that point.
  while (hit?.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  // The hit element is the target or inside it (across shadow roots).
  for (let node: Node | null = hit; node; node = node.parentNode ?? (node as ShadowRoot).host ?? null) {
    if (node === el) return true;
  }
  return false;
}
