/** Where an element sits on the viewer's screen, as getBoundingClientRect gives it. */
export interface ScreenBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Maps a pointer position over the live image to interaction coordinates with the
 * contract's formula: x = round(clientX / displayedWidth * 1024),
 * y = round(clientY / displayedHeight * 600) + 155, client positions taken inside the
 * displayed picture. The image is shown with `object-fit: contain`, so the picture may
 * be letterboxed inside the element's box; a point on the bars gives null.
 *
 * Self-contained on purpose: the view page inlines this function's source, so the page
 * and the unit tests run the same code.
 */
export function toContractPoint(clientX: number, clientY: number, box: ScreenBox): { x: number; y: number } | null {
  const scale = Math.min(box.width / 1024, box.height / 600);
  if (!(scale > 0)) return null;
  const shownWidth = 1024 * scale;
  const shownHeight = 600 * scale;
  const inX = clientX - box.left - (box.width - shownWidth) / 2;
  const inY = clientY - box.top - (box.height - shownHeight) / 2;
  if (inX < 0 || inY < 0 || inX > shownWidth || inY > shownHeight) return null;
  return { x: Math.round((inX / shownWidth) * 1024), y: Math.round((inY / shownHeight) * 600) + 155 };
}

export type KeyInput = { type: 'TYPE'; text: string } | { type: 'KEY_PRESS'; key: string } | null;

/**
 * What a key pressed on the viewer's page becomes: a printable character is typed, a
 * named key (Enter, Escape, Tab, arrows...) is pressed, and shortcuts with Ctrl, Meta or
 * Alt stay with the viewer's own browser (Ctrl together with Alt is AltGr on some
 * layouts, which types characters). Self-contained for the same reason as above.
 */
export function keyInput(e: { key: string; ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean }, namedKeys: readonly string[]): KeyInput {
  if ((e.ctrlKey || e.metaKey || e.altKey) && !(e.ctrlKey && e.altKey)) return null;
  if (namedKeys.includes(e.key)) return { type: 'KEY_PRESS', key: e.key };
  if ([...e.key].length === 1) return { type: 'TYPE', text: e.key };
  return null;
}
