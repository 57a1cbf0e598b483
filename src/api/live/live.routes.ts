import { randomBytes } from 'node:crypto';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { Config } from '../../config';
import { AddressPolicy, parseAllowlist } from '../../contracts/address-policy';
import { machineAddresses } from '../../net/network-guard';
import { MissingFieldError, NotFoundError, ServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import { LIVE_SESSION_STATUSES } from '../../store/sessions.repository';
import type { Store } from '../../store/store';
import type { SessionsService } from '../../sessions/sessions.service';
import { FrameHub } from './frame-hub';
import { renderViewPage, VIEW_PAGE_CSP } from './view-page';
import { RedisSlots } from './redis-slots';
import { WhepEndpoint } from './whep';

/*
 * The live view of a session, outside the API key: the routes below are authorised by
 * the view token (`?token=`, signed and bound to the session, see SessionsService) that
 * start-session returns inside streaming.webViewURL / streaming.webRTCURL, so they can be
 * opened in a browser or a WHEP player. The WHEP resource URL (Location) is itself
 * unguessable and needs no token. An unknown token, session or ended session is 404.
 *
 *   GET    /view/:sessionId?token=          the viewer page (screen, take over, events)
 *   GET    /view/:sessionId/stream?token=   MJPEG (multipart/x-mixed-replace)
 *   POST   /whep/:sessionId?token=          WHEP: SDP offer in, 201 + SDP answer + Location
 *   DELETE /whep/:sessionId/:resourceId     WHEP: ends that viewer
 */

export interface LiveRoutes {
  router: Router;
  /** Ends every stream and peer; call before the HTTP server closes. */
  close(): Promise<void>;
}

const MJPEG_BOUNDARY = 'frame';

type LiveDeps = { config: Config; store: Store; redis: Redis; sessions: SessionsService; logger: Logger };

/** What the live view's routes share: the frames of each session, the viewer slots, the WHEP endpoint and its address guard. */
interface LiveParts {
  deps: LiveDeps;
  logger: Logger;
  hub: FrameHub;
  slots: RedisSlots;
  whep: WhepEndpoint;
  /** The addresses a viewer's offer may make the service probe: the network guard's rules. */
  guardPolicy: AddressPolicy;
  ownAddresses: ReturnType<typeof machineAddresses>;
}

async function isLive(store: Store, sessionId: string): Promise<boolean> {
  const rec = await store.sessions.get(sessionId);
  return !!rec && LIVE_SESSION_STATUSES.includes(rec.status);
}

/** The session the request's view token opens; one 404 for every reason, so nothing is revealed. */
async function authorize(deps: LiveDeps, req: Request): Promise<{ sessionId: string; token: string }> {
  const sessionId = String(req.params.sessionId);
  const token = req.query.token;
  if (typeof token !== 'string' || !token || !deps.sessions.checkViewToken(sessionId, token) || !(await isLive(deps.store, sessionId))) {
    throw new NotFoundError('NOT_FOUND', 'Session not found');
  }
  return { sessionId, token };
}

/** The viewer page and its MJPEG stream. */
function viewRoutes(router: Router, live: LiveParts): void {
  const { deps, logger, slots } = live;
  router.get('/view/:sessionId', async (req, res) => {
    const { sessionId, token } = await authorize(deps, req);
    // The page opens showing who holds the browser; later changes come as events.
    const control = await deps.sessions.controlState(sessionId).catch((err: unknown) => {
      logger.warn({ err, sessionId }, 'control state not read; the page learns it from the events');
      return { manual: false, asleep: false, seq: 0 };
    });
    res
      .set({ 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'Content-Security-Policy': VIEW_PAGE_CSP, 'X-Content-Type-Options': 'nosniff' })
      .type('html')
      .send(renderViewPage({ sessionId, token, control }));
  });

  router.get('/view/:sessionId/stream', async (req, res) => {
    const { sessionId } = await authorize(deps, req);
    // Viewers per session are bounded across API instances, as WHEP peers are.
    const max = deps.config.MJPEG_MAX_VIEWERS_PER_SESSION;
    const viewer = randomBytes(12).toString('hex');
    const key = `bas:mjpeg:${sessionId}`;
    if (!(await slots.acquire(key, viewer, max)).ok) {
      throw new ServiceError('TOO_MANY_VIEWERS', `At most ${max} MJPEG viewers per session; close one first`, { limit: max });
    }
    res.on('close', () => void slots.release(key, viewer).catch((err) => logger.warn({ sessionId, err }, 'MJPEG slot not released')));
    streamMjpeg(live.hub, sessionId, res);
  });
}

// WHEP players usually live on another origin; the token, not the origin, is the credential.
const cors: RequestHandler = (req, res, next) => {
  res.set({
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Methods': 'POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, If-Match',
    'Access-Control-Expose-Headers': 'Location, Content-Type, Accept-Post',
    'Access-Control-Max-Age': '600',
  });
  next();
};

const preflight: RequestHandler = (_req, res) => {
  res.set('Accept-Post', 'application/sdp').status(204).end();
};

/** WHEP: an SDP offer in, 201 with the answer and the viewer's resource; DELETE of the resource ends that viewer. */
function whepRoutes(router: Router, live: LiveParts): void {
  const { whep } = live;
  router.options('/whep/:sessionId', cors, preflight);
  router.options('/whep/:sessionId/:resourceId', cors, preflight);

  router.post('/whep/:sessionId', cors, express.text({ type: 'application/sdp', limit: '256kb' }), async (req, res) => {
    const { sessionId } = await authorize(live.deps, req);
    // req.is: null without a body, false for another type.
    if (req.is('application/sdp') === false) throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'The offer must be sent as Content-Type: application/sdp');
    const offer = typeof req.body === 'string' ? req.body : '';
    if (!offer.trim()) throw new MissingFieldError('body', 'An SDP offer is required as the request body');
    const { resourceId, answerSdp } = await whep.answer(sessionId, offer, { address: req.ip ?? '', policy: live.guardPolicy, ownAddresses: live.ownAddresses });
    const body = Buffer.from(answerSdp);
    res
      .status(201)
      .set({ 'Content-Type': 'application/sdp', 'Content-Length': String(body.length), Location: `/whep/${encodeURIComponent(sessionId)}/${resourceId}`, 'Cache-Control': 'no-store' })
      .end(body);
  });

  router.delete('/whep/:sessionId/:resourceId', cors, (req, res) => {
    if (!whep.close(String(req.params.sessionId), String(req.params.resourceId))) throw new NotFoundError('NOT_FOUND', 'WHEP resource not found');
    res.status(204).end();
  });
}

function liveParts(deps: LiveDeps): LiveParts {
  const logger = deps.logger.child({ component: 'live' });
  const hub = new FrameHub({ redis: deps.redis, logger, isLive: (sessionId) => isLive(deps.store, sessionId) });
  const slots = new RedisSlots(deps.redis);
  const whep = new WhepEndpoint(
    { hub, logger, slots },
    { maxPeersPerSession: deps.config.WHEP_MAX_PEERS_PER_SESSION, iceServers: deps.config.WHEP_ICE_SERVERS, privateCandidates: deps.config.WHEP_PRIVATE_CANDIDATES },
  );
  const ownAddresses = machineAddresses();
  const guardPolicy = new AddressPolicy(parseAllowlist(deps.config.PRIVATE_NETWORK_ALLOWLIST), ownAddresses);
  return { deps, logger, hub, slots, whep, guardPolicy, ownAddresses };
}

export function createLiveRoutes(deps: LiveDeps): LiveRoutes {
  const live = liveParts(deps);
  const router = Router();
  viewRoutes(router, live);
  whepRoutes(router, live);
  let closing: Promise<void> | undefined;
  return {
    router,
    close: () =>
      // Both start at once: viewers' connections end now, not after the decoder thread stops.
      (closing ??= Promise.all([live.whep.closeAll(), live.hub.close()]).then(() => live.slots.close())),
  };
}

/**
 * Writes the session's frames as MJPEG until the viewer leaves or the session ends. Each
 * part is followed at once by the next boundary: browsers show a part only once they see
 * the boundary after it, which would otherwise hold the picture back by one frame.
 */
function streamMjpeg(hub: FrameHub, sessionId: string, res: Response): void {
  const write = (jpeg: Buffer) => {
    // A viewer that cannot keep up skips frames rather than queueing them in memory.
    if (res.destroyed || res.writableNeedDrain) return;
    res.write(`Content-Type: image/jpeg\r\nContent-Length: ${jpeg.length}\r\n\r\n`);
    res.write(jpeg);
    res.write(`\r\n--${MJPEG_BOUNDARY}\r\n`);
  };
  const remove = hub.add(sessionId, { frame: write, end: () => res.end() });
  res.on('close', remove);
  res.writeHead(200, {
    'Content-Type': `multipart/x-mixed-replace; boundary=${MJPEG_BOUNDARY}`,
    'Cache-Control': 'no-store, no-cache, must-revalidate',
    Pragma: 'no-cache',
    'X-Accel-Buffering': 'no',
  });
  res.write(`--${MJPEG_BOUNDARY}\r\n`);
  const latest = hub.latest(sessionId);
  if (latest) write(latest);
}
