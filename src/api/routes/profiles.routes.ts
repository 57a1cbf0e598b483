import { Router, type NextFunction, type Request, type Response } from 'express';
import { NotFoundError, ServiceError } from '../../contracts/errors';
import { linkSecret } from '../../files/links';
import { FILE_LINK_TTL_MS, signFileLink, verifyFileLink } from '../../contracts/link-tokens';
import type { ProfileRecord } from '../../store/profiles.repository';
import type { Logger } from '../../logger';
import { currentUser } from '../middleware/auth';
import { rateLimit } from '../middleware/rate-limit';
import { receiveArchive } from '../uploads';
import { parseNamed } from '../../contracts/schemas/named.schema';
import { sendBlob, type StorageRoutesDeps } from './files.routes';
import { send as sendJson } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** Profiles per user, and the contract's rate limit of the /profiles endpoints (per IP). */
export const MAX_PROFILES = 20;
export const PROFILES_RATE_LIMIT = { limit: 100, windowMs: 15 * 60 * 1000 };

const profileNotFound = () => new NotFoundError('PROFILE_NOT_FOUND', 'Profile not found');
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function profileView(p: ProfileRecord) {
  return {
    _id: p._id,
    userId: p.userId,
    name: p.name,
    description: p.description,
    status: p.status,
    blobSize: p.blobSize,
    blobUploadedAt: iso(p.blobUploadedAt),
    lastUsedAt: iso(p.lastUsedAt),
    usageCount: p.usageCount ?? 0,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

/** A file name for the archive: the profile's name, kept to safe characters. */
const archiveName = (p: ProfileRecord) => `${p.name.replace(/[^\p{L}\p{N}._ -]+/gu, '_').trim() || p._id}.tar.gz`;

/** The profile's archive as a download: PROFILE_NOT_FOUND without the profile, PROFILE_EMPTY without an archive. */
async function sendArchive(deps: StorageRoutesDeps, logger: Logger, res: Response, p: ProfileRecord | null): Promise<void> {
  if (!p) throw profileNotFound();
  if (!p.blobId) throw new NotFoundError('PROFILE_EMPTY', 'Profile has no archive yet; upload one first');
  await sendBlob(res, deps.blobs, p.blobId, { filename: archiveName(p), contentType: 'application/gzip', size: p.blobSize }, logger);
}

/** GET /profiles/:id/download: the archive with the key, or with a signed link (valid one hour) that needs none; `?link` signs one. */
function profileDownloadRoutes(router: Router, deps: StorageRoutesDeps, logger: Logger, secret: string): void {
  const { config, store } = deps;
  // GET /profiles/:id/download?token=…: the signed link (valid one hour) needs no key.
  const bySignedLink = async (req: Request, res: Response, next: NextFunction) => {
    const token = req.query.token;
    if (token === undefined) return next();
    const id = req.params.id as string;
    if (typeof token !== 'string' || !verifyFileLink(secret, `profile:${id}`, token)) throw profileNotFound();
    await sendArchive(deps, logger, res, await store.profiles.byId(id));
  };

  router.get('/profiles/:id/download', bySignedLink, deps.auth, async (req, res) => {
    const p = await store.profiles.get(req.params.id as string, currentUser(req)._id);
    if (req.query.link !== undefined && req.query.link !== 'false' && req.query.link !== '0') {
      if (!p) throw profileNotFound();
      const expiresAt = Date.now() + FILE_LINK_TTL_MS;
      sendJson(res, R.signedLinkSchema, 200, { success: true, downloadUrl: `${config.PUBLIC_BASE_URL}/profiles/${p._id}/download?token=${signFileLink(secret, `profile:${p._id}`, expiresAt)}`, expiresAt: new Date(expiresAt).toISOString() });
      return;
    }
    await sendArchive(deps, logger, res, p);
  });
}

/** The profiles themselves: list, create (at most MAX_PROFILES), read, delete with their archive, upload an archive. */
function profileRecordRoutes(router: Router, deps: StorageRoutesDeps, logger: Logger): void {
  const { config, blobs } = deps;
  const profiles = deps.store.profiles;
  router.get('/profiles', async (req, res) => {
    sendJson(res, R.profileListSchema, 200, { success: true, profiles: (await profiles.list(currentUser(req)._id)).map(profileView) });
  });

  router.post('/profiles', async (req, res) => {
    const fields = parseNamed(req.body, 'Profile');
    const p = await profiles.create(currentUser(req)._id, fields, MAX_PROFILES);
    if (!p) throw new ServiceError('PROFILE_LIMIT_REACHED', `Maximum of ${MAX_PROFILES} profiles allowed`, { limit: MAX_PROFILES });
    sendJson(res, R.profileOneSchema, 200, { success: true, message: 'Profile created', profile: profileView(p) });
  });

  router.get('/profiles/:id', async (req, res) => {
    const p = await profiles.get(req.params.id, currentUser(req)._id);
    if (!p) throw profileNotFound();
    sendJson(res, R.profileOneSchema, 200, { success: true, profile: profileView(p) });
  });

  router.delete('/profiles/:id', async (req, res) => {
    const gone = await profiles.remove(req.params.id, currentUser(req)._id);
    if (!gone) throw profileNotFound();
    if (gone.blobId) await blobs.delete(gone.blobId);
    sendJson(res, R.confirmationSchema, 200, { success: true, message: 'Profile deleted' });
  });

  router.post('/profiles/:id/upload', deps.uploadLimit, async (req, res) => {
    const p = await receiveArchive(req, { repo: profiles, blobs, quota: deps.quota, settings: config, logger }, { id: req.params.id as string, userId: currentUser(req)._id, kind: 'profile', notFound: profileNotFound });
    sendJson(res, R.profileOneSchema, 200, { success: true, message: 'Profile uploaded', profile: profileView(p) });
  });
}

/**
 * /profiles: browser profiles a session can run on (`profileId`). Every request counts
 * against 100 per 15 minutes per IP, failed and unauthenticated ones included.
 */
export function profilesRoutes(deps: StorageRoutesDeps): Router {
  const logger = deps.logger.child({ component: 'profiles' });
  const secret = deps.linkSecret ?? linkSecret(deps.config);
  const limits = deps.profilesRateLimit ?? PROFILES_RATE_LIMIT;
  const router = Router();
  router.use('/profiles', rateLimit({ redis: deps.redis, name: 'profiles', limit: limits.limit, windowMs: limits.windowMs, key: (req) => req.ip ?? 'unknown' }));
  profileDownloadRoutes(router, deps, logger, secret);
  router.use('/profiles', deps.auth);
  profileRecordRoutes(router, deps, logger);
  return router;
}
