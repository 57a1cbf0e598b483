import { Worker } from 'node:worker_threads';

/** The size of the live video; the viewport of every session. */
export const VIDEO_WIDTH = 1024;
export const VIDEO_HEIGHT = 600;

export interface RgbaFrame {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * Scales an RGBA image into width x height keeping its aspect ratio (nearest neighbour),
 * centred on black. Frames normally arrive at the viewport size and are returned as they are.
 * Self-contained on purpose: its source is also run inside the decoder thread.
 */
export function fitRgba(src: RgbaFrame, width: number, height: number): RgbaFrame {
  if (src.width === width && src.height === height) return src;
  const out = new Uint8Array(width * height * 4);
  for (let i = 3; i < out.length; i += 4) out[i] = 255;
  if (src.width <= 0 || src.height <= 0) return { width, height, data: out };
  const scale = Math.min(width / src.width, height / src.height);
  const w = Math.max(1, Math.min(width, Math.round(src.width * scale)));
  const h = Math.max(1, Math.min(height, Math.round(src.height * scale)));
  const left = Math.floor((width - w) / 2);
  const top = Math.floor((height - h) / 2);
  for (let y = 0; y < h; y++) {
    const sy = Math.min(src.height - 1, Math.floor(y / scale));
    for (let x = 0; x < w; x++) {
      const sx = Math.min(src.width - 1, Math.floor(x / scale));
      const si = (sy * src.width + sx) * 4;
      const di = ((top + y) * width + left + x) * 4;
      out[di] = src.data[si];
      out[di + 1] = src.data[si + 1];
      out[di + 2] = src.data[si + 2];
      out[di + 3] = 255;
    }
  }
  return { width, height, data: out };
}

/** Bytes of an I420 frame: a full-size Y plane and quarter-size U and V planes. */
export const i420Size = (width: number, height: number): number => width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);

/**
 * Decodes JPEG frames to RGBA at the video size in a worker thread: a 1024 x 600 decode
 * takes tens of milliseconds of pure JavaScript, too long for the API's event loop.
 * The worker runs from source text, so it works the same from dist and under jest.
 */
export class JpegDecoder {
  private worker?: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (f: RgbaFrame) => void; reject: (e: Error) => void }>();

  constructor(private readonly size = { width: VIDEO_WIDTH, height: VIDEO_HEIGHT }) {}

  decode(jpeg: Uint8Array): Promise<RgbaFrame> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A copy of just these bytes: a Buffer from Redis may view a much larger shared block.
      const bytes = new Uint8Array(jpeg);
      worker.postMessage({ id, jpeg: bytes }, [bytes.buffer]);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('decoder closed'));
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const source = `
      const { parentPort } = require('node:worker_threads');
      const jpeg = require(${JSON.stringify(require.resolve('jpeg-js'))});
      const fitRgba = ${fitRgba.toString()};
      parentPort.on('message', ({ id, jpeg: bytes }) => {
        try {
          const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: 16, maxMemoryUsageInMB: 256 });
          const out = fitRgba(img, ${this.size.width}, ${this.size.height});
          parentPort.postMessage({ id, width: out.width, height: out.height, data: out.data }, [out.data.buffer]);
        } catch (err) {
          parentPort.postMessage({ id, error: String(err && err.message || err) });
        }
      });`;
    const worker = new Worker(source, { eval: true });
    worker.unref();
    worker.on('message', (m: { id: number; error?: string } & RgbaFrame) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error));
      else p.resolve({ width: m.width, height: m.height, data: m.data });
    });
    worker.on('error', (err) => this.failAll(err));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll(new Error('decoder thread exited'));
    });
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
