import { Readable } from 'node:stream';
import { createLogger } from '../logger';
import type { BlobInfo, BlobStore } from '../contracts/profiles';
import type { FilesRepository, NewFileRecord } from '../store/files.repository';
import { MemoryReservationLedger, StorageQuota } from '../store/storage-quota';
import type { Page } from 'playwright-core';
import { PICTURE_WIDTH, StepPictures } from './pictures';

/** Blobs in memory; each put is one write, each file-record insert one call. */
function fakeStorage(opts: { limitBytes?: number; failInsertOnCall?: number } = {}) {
  const blobs = new Map<string, { userId: string; size: number }>();
  let n = 0;
  const store: BlobStore = {
    async put(input: Readable, meta): Promise<BlobInfo> {
      let size = 0;
      for await (const chunk of input) size += (chunk as Buffer).length;
      const blobId = `blob_${++n}`;
      blobs.set(blobId, { userId: meta.userId, size });
      return { blobId, size, filename: meta.filename, contentType: meta.contentType, userId: meta.userId, createdAt: new Date() };
    },
    async get() {
      throw new Error('not used');
    },
    async stat() {
      return null;
    },
    async delete(blobId: string) {
      blobs.delete(blobId);
    },
    async usage(userId: string) {
      return [...blobs.values()].filter((b) => b.userId === userId).reduce((sum, b) => sum + b.size, 0);
    },
  };
  const inserts: NewFileRecord[][] = [];
  let f = 0;
  const files = {
    async createManyFromBlobs(inputs: NewFileRecord[]) {
      inserts.push(inputs);
      // Let other callers come in while this insert is under way.
      await new Promise((r) => setTimeout(r, 20));
      if (opts.failInsertOnCall === inserts.length) throw new Error('database down');
      return inputs.map((i) => ({ _id: `file_${++f}`, blobId: i.blob.blobId, taskId: i.taskId, sessionId: i.sessionId, userId: i.userId, originalName: i.originalName }));
    },
  } as unknown as FilesRepository;
  const quota = new StorageQuota({ usage: store, ledger: new MemoryReservationLedger(), limitBytes: opts.limitBytes ?? 1024 * 1024 });
  return { blobs, inserts, pictures: new StepPictures({ files, blobs: store, quota, logger: createLogger('silent'), pageOf: () => undefined, cpuShort: () => false }) };
}

const owner = (user: string, task: number) => ({ userId: user, sessionId: `ses_${user}_${task}`, taskId: `tsk_${user}_${task}` });
const shots = (...seqs: number[]) => seqs.map((seq) => ({ seq, jpeg: Buffer.alloc(100, seq) }));

describe('StepPictures.store', () => {
  it('writes the pictures of one user that meet in one round, each task getting its own files', async () => {
    const { pictures, inserts } = fakeStorage();
    const first = pictures.store(owner('usr_a', 1), shots(0, 1));
    // These come while the first write is under way: they wait and go together.
    await new Promise((r) => setTimeout(r, 5));
    const later = [2, 3, 4].map((t) => pictures.store(owner('usr_a', t), shots(0)));
    const answers = await Promise.all([first, ...later]);

    expect(inserts.map((i) => i.length)).toEqual([2, 3]);
    expect(inserts[1].map((r) => r.taskId)).toEqual(['tsk_usr_a_2', 'tsk_usr_a_3', 'tsk_usr_a_4']);
    expect([...answers[0].keys()]).toEqual([0, 1]);
    // Every task's picture is its own file, recorded for its own task and session.
    const ids = answers.flatMap((a) => [...a.values()]);
    expect(new Set(ids).size).toBe(5);
    for (const [t, a] of answers.slice(1).entries()) {
      expect([...a.keys()]).toEqual([0]);
      const record = inserts[1][t];
      expect(record).toMatchObject({ userId: 'usr_a', sessionId: `ses_usr_a_${t + 2}`, taskId: `tsk_usr_a_${t + 2}`, kind: 'picture', originalName: 'step-001.jpg' });
    }
  });

  it('keeps users apart: another user never waits for or joins a round', async () => {
    const { pictures, inserts } = fakeStorage();
    const a = pictures.store(owner('usr_a', 1), shots(0));
    const b = pictures.store(owner('usr_b', 1), shots(0));
    await Promise.all([a, b]);
    expect(inserts.map((i) => i.map((r) => r.userId))).toEqual([['usr_a'], ['usr_b']]);
  });

  it('a failed round fails only its own tasks, deletes its blobs, and the next round is written', async () => {
    const { pictures, inserts, blobs } = fakeStorage({ failInsertOnCall: 2 });
    const first = pictures.store(owner('usr_a', 1), shots(0));
    await new Promise((r) => setTimeout(r, 5));
    const failed = [pictures.store(owner('usr_a', 2), shots(0)), pictures.store(owner('usr_a', 3), shots(0))];
    await expect(first).resolves.toBeInstanceOf(Map);
    for (const f of failed) await expect(f).rejects.toThrow('database down');
    // Only the first round's blob stays.
    expect(blobs.size).toBe(1);
    await expect(pictures.store(owner('usr_a', 4), shots(0))).resolves.toEqual(new Map([[0, expect.stringMatching(/^file_/)]]));
    expect(inserts.length).toBe(3);
  });

  it('pictures past the quota are not kept, in the order they came', async () => {
    const { pictures } = fakeStorage({ limitBytes: 250 });
    const first = pictures.store(owner('usr_a', 1), shots(0));
    await new Promise((r) => setTimeout(r, 5));
    const [a, b] = await Promise.all([pictures.store(owner('usr_a', 2), shots(0)), pictures.store(owner('usr_a', 3), shots(0))]);
    expect((await first).size).toBe(1);
    expect(a.size).toBe(1);
    expect(b.size).toBe(0);
  });
});

/** A page whose view signature the test sets, counting the shots DevTools was asked for. */
function fakePage() {
  const state = { signature: 'a', frames: 1, boxes: 0, captures: [] as unknown[], calls: [] as string[], sent: [] as string[] };
  const frame = {
    isDetached: () => false,
    evaluate: async (_fn: unknown, args: { mode: string; previous?: string | null; cover?: boolean }) => {
      state.calls.push(args.mode);
      return args.mode === 'look' ? { signature: state.signature, covered: args.cover && state.signature !== args.previous ? state.boxes : -1 } : { covered: args.mode === 'cover' ? state.boxes : 0 };
    },
  };
  const page = {
    isClosed: () => false,
    url: () => 'http://example.test/',
    viewportSize: () => ({ width: 1024, height: 600 }),
    frames: () => Array.from({ length: state.frames }, () => frame),
    mainFrame: () => frame,
    context: () => ({
      newCDPSession: async () => {
        const listeners = new Set<(frame: unknown) => void>();
        return {
          on: (_event: string, fn: (frame: unknown) => void) => listeners.add(fn),
          off: (_event: string, fn: (frame: unknown) => void) => listeners.delete(fn),
          send: async (method: string, params: unknown) => {
            state.sent.push(method);
            // The screencast's first frame follows its start, as Chromium sends it.
            if (method === 'Page.startScreencast') {
              state.captures.push(params);
              setImmediate(() => listeners.forEach((fn) => fn({ data: Buffer.from('jpeg').toString('base64'), sessionId: state.captures.length })));
            }
            return {};
          },
        };
      },
    }),
  };
  return { page: page as unknown as Page, state };
}

describe('StepPictures.shoot', () => {
  const make = (page: Page, short = () => false) => new StepPictures({ files: {} as FilesRepository, blobs: {} as BlobStore, quota: {} as StorageQuota, logger: createLogger('silent'), pageOf: () => page, cpuShort: short });

  it('captures at the width the record page shows, and skips a view that did not change since the task’s last picture', async () => {
    const { page, state } = fakePage();
    const pictures = make(page);
    expect((await pictures.shoot('s', 't1')).jpeg).toBeDefined();
    // The first frame of a screencast at the record page's width, started and stopped for it.
    expect(state.captures[0]).toMatchObject({ format: 'jpeg', maxWidth: PICTURE_WIDTH, maxHeight: Math.round((600 * PICTURE_WIDTH) / 1024) });
    expect(state.sent).toEqual(['Page.startScreencast', 'Page.screencastFrameAck', 'Page.stopScreencast']);
    expect(await pictures.shoot('s', 't1')).toEqual({ skipped: 'unchanged' });
    state.signature = 'b';
    expect((await pictures.shoot('s', 't1')).jpeg).toBeDefined();
    // Another task's first step is always shot, as is a page with frames (they draw on their own).
    expect((await pictures.shoot('s', 't2')).jpeg).toBeDefined();
    state.frames = 2;
    expect((await pictures.shoot('s', 't2')).jpeg).toBeDefined();
    expect(state.captures).toHaveLength(4);
  });

  it('takes every other step’s picture while the CPU is short, saying why for the others', async () => {
    const { page, state } = fakePage();
    const pictures = make(page, () => true);
    const answers = [];
    for (let step = 0; step < 4; step++) {
      state.signature = `view-${step}`;
      const shot = await pictures.shoot('s', 't');
      answers.push(shot.jpeg ? 'picture' : shot.skipped);
    }
    expect(answers).toEqual(['picture', 'busy', 'picture', 'busy']);
  });

  it('asks the page once for the signature and the covers, and again only to take boxes away', async () => {
    const { page, state } = fakePage();
    const pictures = make(page);
    expect((await pictures.shoot('s', 't')).jpeg).toBeDefined();
    expect(await pictures.shoot('s', 't')).toEqual({ skipped: 'unchanged' });
    expect(state.calls).toEqual(['look', 'look']);
    // A secret field on the page: covered in the same call, uncovered after the capture.
    state.calls = [];
    state.boxes = 1;
    state.signature = 'b';
    expect((await pictures.shoot('s', 't')).jpeg).toBeDefined();
    expect(state.calls).toEqual(['look', 'uncover']);
    // With frames, each frame is covered on its own and uncovered after.
    state.calls = [];
    state.frames = 2;
    expect((await pictures.shoot('s', 't')).jpeg).toBeDefined();
    expect(state.calls).toEqual(['cover', 'cover', 'uncover', 'uncover']);
    expect(state.captures).toHaveLength(3);
  });

  it('says there is no page when the session has none', async () => {
    const pictures = new StepPictures({ files: {} as FilesRepository, blobs: {} as BlobStore, quota: {} as StorageQuota, logger: createLogger('silent'), pageOf: () => undefined, cpuShort: () => false });
    expect(await pictures.shoot('gone', 't')).toEqual({ skipped: 'no_page' });
  });
});
