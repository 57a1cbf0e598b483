import { Router } from 'express';
import { NotFoundError, ServiceError } from '../../contracts/errors';
import { chatView, newWebhookSecret, sealChatConnection, WEBHOOK_SECRET_FIELD } from '../../environments/chat-connection';
import { parseChatConnection } from '../../contracts/schemas/chat-connection.schema';
import { chatRepliesView } from './chat.routes';
import type { EnvironmentRecord } from '../../store/environments.repository';
import type { FileRecord } from '../../store/files.repository';
import type { Logger } from '../../logger';
import { currentUser } from '../middleware/auth';
import { parseNamed } from '../../contracts/schemas/named.schema';
import { receiveArchive, receiveFiles, storeUploadedFile } from '../uploads';
import { MAX_FILES_PER_REQUEST, fileNotFound, type StorageRoutesDeps } from './files.routes';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** Environments per user (the contract's limit). */
export const MAX_ENVIRONMENTS = 20;

const environmentNotFound = () => new NotFoundError('ENVIRONMENT_NOT_FOUND', 'Environment not found');

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function environmentView(e: EnvironmentRecord) {
  return {
    _id: e._id,
    userId: e.userId,
    name: e.name,
    description: e.description,
    status: e.status,
    blobSize: e.blobSize,
    blobUploadedAt: iso(e.blobUploadedAt),
    chat: chatView(e.chat),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}

const attachedFileView = (f: FileRecord) => ({ fileId: f._id, originalName: f.originalName, size: f.size, createdAt: iso(f.createdAt) });

/** The caller's environment, or ENVIRONMENT_NOT_FOUND (another user's included). */
async function ownedEnvironment(deps: StorageRoutesDeps, id: string, userId: string): Promise<EnvironmentRecord> {
  const env = await deps.store.environments.get(id, userId);
  if (!env) throw environmentNotFound();
  return env;
}

/** The environments themselves: create (at most MAX_ENVIRONMENTS), list, read, delete with their data. */
function environmentRecordRoutes(router: Router, deps: StorageRoutesDeps): void {
  const { store, blobs } = deps;
  const envs = store.environments;
  router.post('/environments', async (req, res) => {
    const user = currentUser(req);
    const fields = parseNamed(req.body, 'Environment');
    const env = await envs.create(user._id, fields, MAX_ENVIRONMENTS);
    if (!env) throw new ServiceError('ENVIRONMENT_LIMIT_REACHED', `Maximum of ${MAX_ENVIRONMENTS} environments allowed`, { limit: MAX_ENVIRONMENTS });
    const { _id, userId, name, description, status, createdAt, updatedAt } = environmentView(env);
    send(res, R.environmentCreatedSchema, 200, { success: true, message: 'Environment created', environment: { _id, userId, name, description, status, createdAt, updatedAt } });
  });

  router.get('/environments', async (req, res) => {
    const list = await envs.list(currentUser(req)._id);
    send(res, R.environmentListSchema, 200, { success: true, environments: list.map(environmentView) });
  });

  router.get('/environments/:id', async (req, res) => {
    send(res, R.environmentOneSchema, 200, { success: true, environment: environmentView(await ownedEnvironment(deps, req.params.id, currentUser(req)._id)) });
  });

  router.delete('/environments/:id', async (req, res) => {
    const gone = await envs.remove(req.params.id, currentUser(req)._id);
    if (!gone) throw environmentNotFound();
    // The record is gone first, so nothing new attaches; then its data.
    await store.files.deleteForEnvironment(gone._id);
    if (gone.blobId) await blobs.delete(gone.blobId);
    send(res, R.confirmationSchema, 200, { success: true, message: 'Environment deleted' });
  });
}

/** The environment's data: its browser profile archive and its attached files. */
function environmentDataRoutes(router: Router, deps: StorageRoutesDeps, logger: Logger): void {
  const { config, store, blobs } = deps;
  router.post('/environments/:id/upload', deps.uploadLimit, async (req, res) => {
    const env = await receiveArchive(req, { repo: store.environments, blobs, quota: deps.quota, settings: config, logger }, { id: req.params.id as string, userId: currentUser(req)._id, kind: 'environment', notFound: environmentNotFound });
    send(res, R.environmentUploadedSchema, 200, {
      success: true,
      message: 'Profile uploaded',
      environment: { _id: env._id, name: env.name, status: env.status, blobSize: env.blobSize, blobUploadedAt: iso(env.blobUploadedAt) },
    });
  });

  router.post('/environments/:id/files', deps.uploadLimit, async (req, res) => {
    const user = currentUser(req);
    const env = await ownedEnvironment(deps, req.params.id as string, user._id);
    const files = await receiveFiles(req, {
      field: 'files',
      maxFiles: MAX_FILES_PER_REQUEST,
      logger,
      onFile: (file) => storeUploadedFile({ blobs, quota: deps.quota, files: store.files, settings: config }, file, { userId: user._id, kind: 'environment', environmentId: env._id, ttlMs: null }),
      undo: (f) => store.files.deleteOne(f._id).then(() => undefined),
    });
    // Deleted while the files streamed: they go with it.
    if (!(await store.environments.get(env._id, user._id))) {
      for (const f of files) await store.files.deleteOne(f._id);
      throw environmentNotFound();
    }
    send(res, R.attachedFilesSchema, 200, { success: true, message: files.length === 1 ? 'File uploaded' : `${files.length} files uploaded`, files: files.map(attachedFileView) });
  });

  router.get('/environments/:id/files', async (req, res) => {
    const user = currentUser(req);
    const env = await ownedEnvironment(deps, req.params.id, user._id);
    send(res, R.attachedFilesSchema, 200, { success: true, files: (await store.files.listForEnvironment(env._id, user._id)).map(attachedFileView) });
  });

  router.delete('/environments/:id/files/:fileId', async (req, res) => {
    const user = currentUser(req);
    const env = await ownedEnvironment(deps, req.params.id, user._id);
    if (!(await store.files.deleteFromEnvironment(env._id, req.params.fileId, user._id))) throw fileNotFound();
    send(res, R.confirmationSchema, 200, { success: true, message: 'File deleted' });
  });
}

/** The environment's chat connection (reach-out): saved sealed, with a webhook secret shown only then; removed idempotently. */
function chatConnectionRoutes(router: Router, deps: StorageRoutesDeps): void {
  const { config, secretKey } = deps;
  const envs = deps.store.environments;
  router.put('/environments/:id/chat', async (req, res) => {
    const user = currentUser(req);
    const env = await ownedEnvironment(deps, req.params.id, user._id);
    const { provider, fields } = parseChatConnection(req.body);
    // A secret token of ours for the provider's webhook (replies to reach-out), shown only now.
    const webhookSecret = newWebhookSecret();
    const updated = await envs.setChat(env._id, user._id, sealChatConnection(secretKey, env._id, provider, { ...fields, [WEBHOOK_SECRET_FIELD]: webhookSecret }));
    if (!updated) throw environmentNotFound();
    send(res, R.chatSavedSchema, 200, { success: true, message: 'Chat connection saved', chat: chatView(updated.chat), replies: chatRepliesView(config, provider, env._id, webhookSecret) });
  });

  router.delete('/environments/:id/chat', async (req, res) => {
    const user = currentUser(req);
    const env = await ownedEnvironment(deps, req.params.id, user._id);
    // Idempotent: an environment without a chat connection has none to remove, which is success.
    const removed = await envs.clearChat(env._id, user._id);
    send(res, R.confirmationSchema, 200, { success: true, message: removed ? 'Chat connection removed' : 'No chat connection to remove' });
  });
}

/**
 * /environments: a browser profile archive (uploaded as .tar.gz), attached files and a chat
 * connection per environment; 20 per user; another user's environment is 404.
 */
export function environmentsRoutes(deps: StorageRoutesDeps): Router {
  const logger = deps.logger.child({ component: 'environments' });
  const router = Router();
  router.use('/environments', deps.auth);
  environmentRecordRoutes(router, deps);
  environmentDataRoutes(router, deps, logger);
  chatConnectionRoutes(router, deps);
  return router;
}
