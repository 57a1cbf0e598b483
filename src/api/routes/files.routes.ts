import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Redis } from 'ioredis';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../../config';
import { InvalidParameterError, NotFoundError } from '../../contracts/errors';
import { linkSecret } from '../../files/links';
import { verifyFileLink } from '../../contracts/link-tokens';
import type { Logger } from '../../logger';
import type { BlobStore } from '../../contracts/profiles';
import type { EnvironmentsRepository } from '../../store/environments.repository';
import type { FileRecord, FilesRepository } from '../../store/files.repository';
import type { ProfilesRepository } from '../../store/profiles.repository';
import type { StorageQuota } from '../../store/storage-quota';
import { decodeCursor, encodeCursor, parseLimit } from '../../contracts/cursor';
import { currentUser } from '../middleware/auth';
import { receiveFiles, storeUploadedFile, type StorageSettings } from '../uploads';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** What the environment, profile and file routes need. */
export interface StorageRoutesDeps {
  config: Config & StorageSettings;
  store: { environments: EnvironmentsRepository; profiles: ProfilesRepository; files: FilesRepository };
  blobs: BlobStore;
  /** The per-user storage cap every stored blob reserves its bytes against. */
  quota: StorageQuota;
  redis: Redis;
  /** The API key middleware. */
  auth: RequestHandler;
  /** The shared per-user limit (10/min) of the session, task and upload endpoints. */
  limit: RequestHandler;
  /** The per-user limit of archive uploads and environment file uploads (UPLOAD_RATE_LIMIT_PER_MINUTE). */
  uploadLimit: RequestHandler;
  /** The service's secret key (the payload key); chat connection secrets are sealed under a key derived from it. */
  secretKey: Buffer;
  logger: Logger;
  /** Secret of signed download links; by default the one `wireFiles` signs task downloads with. */
  linkSecret?: string;
  /** The /profiles limit per IP; the contract's 100 per 15 minutes by default. */
  profilesRateLimit?: { limit: number; windowMs: number };
}

/** Files of one request (POST /files/upload) or environment; more is refused with 400. */
export const MAX_FILES_PER_REQUEST = 20;

export const fileNotFound = () => new NotFoundError('FILE_NOT_FOUND', 'File not found');

/** `attachment` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'download';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * Streams a blob as a download. User content is never rendered on the API's origin:
 * always an attachment, no sniffing, sandboxed.
 */
export async function sendBlob(res: Response, blobs: BlobStore, blobId: string, file: { filename: string; contentType: string; size: number | null }, logger: Logger): Promise<void> {
  const stream = await blobs.get(blobId);
  res.status(200).set({
    'Content-Type': file.contentType || 'application/octet-stream',
    'Content-Disposition': contentDisposition(file.filename),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
    ...(file.size !== null ? { 'Content-Length': String(file.size) } : {}),
  });
  try {
    await pipeline(stream, res);
  } catch (err) {
    // The client went away or storage failed mid-stream: the status is sent, so the connection is cut.
    logger.debug({ err, blobId }, 'download interrupted');
    res.destroy();
  }
}

export const uploadedFileView = (f: FileRecord) => ({ fileId: f._id, originalName: f.originalName, size: f.size });

/** A file of GET /files: an upload, or a download of the agent's browser (with where and when it came from). */
export const storedFileView = (f: FileRecord) => ({
  fileId: f._id,
  originalName: f.originalName,
  size: f.size,
  contentType: f.contentType,
  source: f.kind === 'download' ? ('download' as const) : ('upload' as const),
  createdAt: f.createdAt.toISOString(),
  expiresAt: f.expiresAt ? f.expiresAt.toISOString() : null,
  ...(f.kind === 'download' ? { sessionId: f.sessionId, taskId: f.taskId, sourceUrl: f.sourceUrl } : {}),
});

/**
 * POST /files/upload (multipart `files`; several at once; each under FILE_MAX_BYTES),
 * GET /files (the caller's uploads and downloads, newest first, `?limit=&cursor=`),
 * DELETE /files/:fileId, and GET /files/:fileId/download (the owner's key, or a signed
 * link from data.files[]). Another user's file is 404 everywhere.
 */
export function filesRoutes(deps: StorageRoutesDeps): Router {
  const { config, store, blobs } = deps;
  const logger = deps.logger.child({ component: 'files' });
  const secret = deps.linkSecret ?? linkSecret(config);
  const router = Router();

  router.post('/files/upload', deps.auth, deps.limit, async (req, res) => {
    const user = currentUser(req);
    const files = await receiveFiles(req, {
      field: 'files',
      maxFiles: MAX_FILES_PER_REQUEST,
      logger,
      onFile: (file) => storeUploadedFile({ blobs, quota: deps.quota, files: store.files, settings: config }, file, { userId: user._id, kind: 'upload', ttlMs: config.FILE_UPLOAD_TTL_MS }),
      undo: (f) => store.files.deleteOne(f._id).then(() => undefined),
    });
    send(res, R.uploadedFilesSchema, 200, { success: true, files: files.map(uploadedFileView) });
  });

  router.get('/files', deps.auth, async (req, res) => {
    const user = currentUser(req);
    const limit = parseLimit(req.query.limit);
    const cursor = req.query.cursor;
    if (cursor !== undefined && typeof cursor !== 'string') throw new InvalidParameterError('cursor', cursor, 'cursor must be given once; pass the nextCursor of the previous page');
    const after = typeof cursor === 'string' && cursor !== '' ? decodeCursor(cursor) : undefined;
    const page = await store.files.listForUser(user._id, { limit: limit + 1, after });
    const more = page.length > limit;
    const files = page.slice(0, limit);
    const last = files[files.length - 1];
    send(res, R.filePageSchema, 200, { success: true, files: files.map(storedFileView), nextCursor: more && last ? encodeCursor({ createdAt: last.createdAt, id: last._id }) : null });
  });

  router.delete('/files/:fileId', deps.auth, async (req, res) => {
    if (!(await store.files.deleteForUser(req.params.fileId as string, currentUser(req)._id))) throw fileNotFound();
    send(res, R.confirmationSchema, 200, { success: true, message: 'File deleted' });
  });

  const serve = async (res: Response, file: FileRecord | null) => {
    if (!file) throw fileNotFound();
    try {
      await sendBlob(res, blobs, file.blobId, { filename: file.originalName, contentType: file.contentType, size: file.size }, logger);
    } catch (err) {
      if ((err as { code?: string }).code === 'BLOB_NOT_FOUND') throw fileNotFound();
      throw err;
    }
  };
  // A signed link needs no key; without one it is the owner's key, and 404 for anyone else.
  const bySignedLink = async (req: Request, res: Response, next: NextFunction) => {
    const token = req.query.token;
    if (token === undefined) return next();
    if (typeof token !== 'string' || !verifyFileLink(secret, req.params.fileId as string, token)) throw fileNotFound();
    await serve(res, await store.files.get(req.params.fileId as string));
  };
  router.get('/files/:fileId/download', bySignedLink, deps.auth, async (req, res) => {
    await serve(res, await store.files.getForUser(req.params.fileId as string, currentUser(req)._id));
  });

  return router;
}
