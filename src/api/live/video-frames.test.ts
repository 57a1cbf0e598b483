import { nonstandard } from '@roamhq/wrtc';
import jpeg from 'jpeg-js';
import { fitRgba, i420Size, JpegDecoder, VIDEO_HEIGHT, VIDEO_WIDTH } from './video-frames';

/** A width x height picture: red on the left half, blue on the right. */
function picture(width: number, height: number) {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      data.set(x < width / 2 ? [255, 0, 0, 255] : [0, 0, 255, 255], i);
    }
  }
  return { width, height, data };
}

const pixel = (f: { width: number; data: Uint8Array }, x: number, y: number) => [...f.data.subarray((y * f.width + x) * 4, (y * f.width + x) * 4 + 4)];

describe('fitting frames to the video size', () => {
  it('passes a frame of the right size through untouched', () => {
    const p = picture(VIDEO_WIDTH, VIDEO_HEIGHT);
    expect(fitRgba(p, VIDEO_WIDTH, VIDEO_HEIGHT)).toBe(p);
  });

  it('scales a smaller frame up and pads it with black, keeping the aspect ratio', () => {
    const out = fitRgba(picture(512, 400), VIDEO_WIDTH, VIDEO_HEIGHT);
    expect(out).toMatchObject({ width: 1024, height: 600 });
    expect(out.data.length).toBe(1024 * 600 * 4);
    // 512 x 400 scales by 1.5 to 768 x 600: 128 px bars left and right
    expect(pixel(out, 10, 300)).toEqual([0, 0, 0, 255]);
    expect(pixel(out, 1010, 300)).toEqual([0, 0, 0, 255]);
    expect(pixel(out, 130, 300)).toEqual([255, 0, 0, 255]);
    expect(pixel(out, 890, 300)).toEqual([0, 0, 255, 255]);
  });

  it('scales a larger frame down', () => {
    const out = fitRgba(picture(2048, 1200), VIDEO_WIDTH, VIDEO_HEIGHT);
    expect(pixel(out, 0, 0)).toEqual([255, 0, 0, 255]);
    expect(pixel(out, 1023, 599)).toEqual([0, 0, 255, 255]);
  });
});

describe('JPEG frames to I420', () => {
  const decoder = new JpegDecoder();
  afterAll(() => decoder.close());

  it('decodes in a worker thread to RGBA at the video size, and converts to an I420 frame', async () => {
    const encoded = jpeg.encode(picture(1024, 600), 80).data;
    const rgba = await decoder.decode(encoded);
    expect(rgba).toMatchObject({ width: 1024, height: 600 });
    expect(rgba.data.length).toBe(1024 * 600 * 4);
    expect(pixel(rgba, 100, 100)[0]).toBeGreaterThan(200);
    expect(pixel(rgba, 900, 100)[2]).toBeGreaterThan(200);

    const i420 = { width: 1024, height: 600, data: new Uint8Array(i420Size(1024, 600)) };
    expect(i420.data.length).toBe(1024 * 600 * 1.5);
    nonstandard.rgbaToI420(rgba, i420);
    // BT.601 luma: red about 81, blue about 41
    expect(i420.data[100 * 1024 + 100]).toBeGreaterThan(60);
    expect(i420.data[100 * 1024 + 900]).toBeLessThan(60);
  });

  it('pads a frame of another size to 1024 x 600', async () => {
    const rgba = await decoder.decode(jpeg.encode(picture(800, 600), 80).data);
    expect(rgba).toMatchObject({ width: 1024, height: 600 });
    expect(pixel(rgba, 5, 300).slice(0, 3)).toEqual([0, 0, 0]);
  });

  it('rejects what is not a JPEG and keeps working', async () => {
    await expect(decoder.decode(Buffer.from('not a jpeg'))).rejects.toThrow();
    await expect(decoder.decode(jpeg.encode(picture(16, 16), 80).data)).resolves.toMatchObject({ width: 1024 });
  });

  it('odd sizes have room for their rounded-up chroma planes', () => {
    expect(i420Size(3, 3)).toBe(9 + 2 * 4);
  });
});
