import jpeg from 'jpeg-js';
import { paintOverJpeg } from './paint-over';

/** A red picture `width` x `height`. */
function redJpeg(width: number, height: number): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < data.length; i += 4) [data[i], data[i + 1], data[i + 2], data[i + 3]] = [255, 0, 0, 255];
  return Buffer.from(jpeg.encode({ data, width, height }, 90).data);
}

const pixel = (image: { data: Uint8Array; width: number }, x: number, y: number) => Array.from(image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 3));

describe('paintOverJpeg', () => {
  it('paints the rectangles black at the picture scale, with a margin, and leaves the rest', () => {
    // A 1280 x 800 viewport shown 640 x 400: half scale.
    const painted = jpeg.decode(paintOverJpeg(redJpeg(640, 400), [{ x: 100, y: 100, width: 200, height: 60 }], { cssWidth: 1280, cssHeight: 800 }, 80), { useTArray: true });
    expect(painted.width).toBe(640);
    for (const [x, y] of [
      [50, 50],
      [150, 80],
      [149, 50],
      [51, 79],
    ]) {
      expect(pixel(painted, x, y).every((c) => c < 30)).toBe(true);
    }
    // well outside (past the margin and JPEG's 8-pixel blocks)
    expect(pixel(painted, 20, 20)[0]).toBeGreaterThan(200);
    expect(pixel(painted, 200, 120)[0]).toBeGreaterThan(200);
  });

  it('leaves a picture without rectangles as it is, and clips rectangles to the picture', () => {
    const red = redJpeg(64, 32);
    expect(paintOverJpeg(red, [], { cssWidth: 64, cssHeight: 32 }, 80)).toBe(red);
    const painted = jpeg.decode(paintOverJpeg(red, [{ x: -50, y: -50, width: 500, height: 500 }], { cssWidth: 64, cssHeight: 32 }, 80), { useTArray: true });
    expect(pixel(painted, 63, 31).every((c) => c < 30)).toBe(true);
  });
});
