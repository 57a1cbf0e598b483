import { PassThrough, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { ServiceError } from '../contracts/errors';
import { InvalidArchiveError } from './archive-paths';

/** What the entries read so far account for: the bytes of their files, and how many bytes gunzip may inflate. */
export interface InflateTally {
  bytes: number;
  budget: number;
}

/** An error of the input itself, marked so that it is passed on as it is. */
export const inputError = (err: Error): Error => (err instanceof ServiceError ? err : Object.assign(err, { fromInput: true }));

/**
 * An archive's stream on its way to the tar parser: counted, gunzipped, bounded. Every
 * inflated byte counts against the tally's budget, whatever the tar parser does with it;
 * the first failure upstream of the parser is kept and ends the parse.
 */
export class InflatingInput {
  readonly extract = tar.extract();
  /** The first failure upstream of the tar parser: the input's own error is passed on as it is. */
  upstreamFailure: Error | undefined;
  private readonly counter = new PassThrough();
  private readonly gunzip = zlib.createGunzip();
  private inputBytes = 0;
  private head = Buffer.alloc(0);
  private inflated = 0;

  constructor(
    private readonly input: Readable,
    private readonly tally: InflateTally,
    private readonly maxBytes: number,
  ) {
    const { counter, gunzip } = this;
    counter.on('data', (c: Buffer) => {
      if (this.head.length < 2) this.head = Buffer.concat([this.head, c.subarray(0, 2)]);
      this.inputBytes += c.length;
    });
    input.on('error', (err) => this.stop(inputError(err)));
    gunzip.on('error', (err) => this.stop(gzipError(err, this.inputBytes, this.head[0] === 0x1f && this.head[1] === 0x8b)));
    // Registered before the pipe, so the chunk that passes the budget never reaches the parser.
    gunzip.on('data', this.onInflated);
    input.pipe(counter).pipe(gunzip).pipe(this.extract as unknown as NodeJS.WritableStream);
  }

  /** The parse failed: the input is let go and nothing more is inflated. */
  abort(): void {
    this.input.unpipe(this.counter);
    this.counter.destroy();
    this.gunzip.destroy();
  }

  /**
   * gunzip stops at the end of the gzip data; whatever follows (padding) is read and dropped,
   * so a stream shared with another consumer is never left stalled.
   */
  async readToEnd(): Promise<void> {
    this.input.unpipe(this.counter);
    this.input.resume();
    await finished(this.input, { writable: false });
  }

  private stop(err: Error): void {
    this.upstreamFailure ??= err;
    this.extract.destroy(err);
  }

  private readonly onInflated = (c: Buffer): void => {
    this.inflated += c.length;
    if (this.inflated <= this.tally.budget) return;
    this.gunzip.off('data', this.onInflated);
    const { budget, bytes } = this.tally;
    this.stop(new ServiceError('PAYLOAD_TOO_LARGE', `The archive expands to more than its entries hold (over ${budget} bytes of tar for ${bytes} bytes of files)`, { maxBytes: this.maxBytes }));
    this.input.unpipe(this.counter);
    this.counter.unpipe(this.gunzip);
    this.gunzip.destroy();
  };
}

function gzipError(err: Error & { code?: string }, inputBytes: number, startsAsGzip: boolean): Error {
  if (inputBytes === 0) return new InvalidArchiveError('The file is empty; expected a .tar.gz archive');
  if (err.code === 'Z_DATA_ERROR' && /header check/i.test(err.message) && startsAsGzip) return new InvalidArchiveError('The gzip data is corrupt or followed by data that is not gzip');
  if (err.code === 'Z_DATA_ERROR' && /header check/i.test(err.message)) return new InvalidArchiveError('The file is not gzip-compressed; expected a .tar.gz archive');
  return new InvalidArchiveError(`The gzip data is corrupt or truncated (${err.message})`);
}
