/**
 * Black boxes painted into a captured picture itself, over the rectangles where secret fields
 * were read: whatever layer a field paints in (the top layer of a modal dialog or a popover
 * is above any cover put into the page) and however old the frame, those pixels are gone.
 */
import jpeg from 'jpeg-js';

/** A rectangle in CSS pixels of the viewport. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** CSS pixels added around each rectangle (a focus ring, a border, rounding). */
const MARGIN = 3;
/** The largest picture decoded (a viewport of 4K at 2x is far below). */
const MAX_DECODE_MB = 256;

/**
 * The JPEG with every rectangle painted black, re-encoded at `quality`. `cssWidth` and
 * `cssHeight` are the viewport's size in CSS pixels the picture shows (it may be scaled).
 */
export function paintOverJpeg(picture: Buffer, rects: Rect[], view: { cssWidth: number; cssHeight: number }, quality: number): Buffer {
  if (!rects.length) return picture;
  const image = jpeg.decode(picture, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: MAX_DECODE_MB });
  paintRects(image, rects, { x: image.width / Math.max(1, view.cssWidth), y: image.height / Math.max(1, view.cssHeight) });
  return Buffer.from(jpeg.encode({ data: image.data, width: image.width, height: image.height }, quality).data);
}

/** Paints the rectangles (CSS pixels, `scale` image pixels each) black into RGBA pixels. */
export function paintRects(image: { data: Uint8Array; width: number; height: number }, rects: Rect[], scale: { x: number; y: number }): void {
  for (const r of rects) {
    const left = clamp(Math.floor((r.x - MARGIN) * scale.x), image.width);
    const right = clamp(Math.ceil((r.x + r.width + MARGIN) * scale.x), image.width);
    const top = clamp(Math.floor((r.y - MARGIN) * scale.y), image.height);
    const bottom = clamp(Math.ceil((r.y + r.height + MARGIN) * scale.y), image.height);
    for (let y = top; y < bottom; y++) {
      const row = y * image.width * 4;
      for (let x = left; x < right; x++) {
        const at = row + x * 4;
        image.data[at] = 0;
        image.data[at + 1] = 0;
        image.data[at + 2] = 0;
        image.data[at + 3] = 255;
      }
    }
  }
}

const clamp = (value: number, max: number): number => Math.min(max, Math.max(0, value));
