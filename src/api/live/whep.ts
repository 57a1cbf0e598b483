import { randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { MediaStreamTrack, nonstandard, RTCPeerConnection } from '@roamhq/wrtc';
import type { AddressPolicy } from '../../contracts/address-policy';
import { InvalidParamsError, ServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';
import type { FrameHub } from './frame-hub';
import type { RedisSlots } from './redis-slots';
import { i420Size, JpegDecoder, VIDEO_HEIGHT, VIDEO_WIDTH } from './video-frames';

type Wrtc = typeof import('@roamhq/wrtc');
type RTCVideoFrame = nonstandard.RTCVideoFrame;
type RTCVideoSource = nonstandard.RTCVideoSource;

export interface WhepOptions {
  /** Answers are not trickled: ICE candidates are gathered before answering, at most this long. */
  iceGatheringTimeoutMs: number;
  /** The latest frame is sent again this often, so a still page keeps the track alive. */
  repeatMs: number;
  /** JPEG decodes per session are at least this far apart (caps the CPU spent on a busy page). */
  minDecodeIntervalMs: number;
  /** A peer that does not connect within this time is dropped. */
  connectTimeoutMs: number;
  /** A disconnected peer that does not come back within this time is dropped. */
  disconnectGraceMs: number;
  maxPeersPerSession: number;
  /** STUN/TURN servers (WHEP_ICE_SERVERS). */
  iceServers: { urls: string | string[]; username?: string; credential?: string }[];
  /** Whether answers may list host candidates on private addresses (WHEP_PRIVATE_CANDIDATES). */
  privateCandidates: boolean;
}

const DEFAULTS: WhepOptions = {
  iceGatheringTimeoutMs: 2000,
  repeatMs: 100,
  minDecodeIntervalMs: 50,
  connectTimeoutMs: 30_000,
  disconnectGraceMs: 5000,
  maxPeersPerSession: 10,
  iceServers: [],
  privateCandidates: false,
};

/**
 * The answer without candidates on private, loopback or link-local addresses: the API host's
 * inside addresses are not told to whoever holds a view token. The viewer's own candidates
 * (in its offer) still let the connection form: the service's checks reach them and show
 * its address as a peer-reflexive one.
 */
export function withoutPrivateCandidates(sdp: string): string {
  return sdp
    .split(/\r\n/)
    .filter((line) => {
      const m = /^a=candidate:\S+ \d+ \S+ \d+ (\S+) \d+ typ (\S+)/.exec(line);
      return !m || !isInsideAddress(m[1]);
    })
    .join('\r\n');
}

function isInsideAddress(address: string): boolean {
  if (address.endsWith('.local')) return false; // an mDNS name already hides the address
  if (!ipaddr.isValid(address)) return true; // anything unreadable is not sent
  const parsed = ipaddr.process(address);
  return parsed.range() !== 'unicast';
}

/** Who sent an offer: its address as the API saw it, and the guard's rules for the addresses its offer lists. */
export interface Viewer {
  address: string;
  policy: AddressPolicy;
  /** This machine's interface addresses (normalised). */
  ownAddresses: ReadonlySet<string>;
}

const CANDIDATE = /^a=candidate:\S+ \d+ (\S+) \d+ (\S+) (\d+) typ /i;

/**
 * The offer without candidates the service may not send to: its connectivity checks go only to
 * the viewer's own address, to addresses the network guard allows (public ones, the
 * allowlist), to this machine when the viewer is on it, and to mDNS names (which hide an
 * address of the viewer's own network). Anything else (an inside address of the operator's
 * network listed by whoever holds a view token) would be probed.
 */
export function offerWithinGuard(sdp: string, viewer: Viewer): { sdp: string; dropped: number } {
  let dropped = 0;
  const lines = sdp.split(/\r?\n/).filter((line) => {
    const m = CANDIDATE.exec(line);
    if (!m || mayProbe(m[2], Number(m[3]), viewer)) return true;
    dropped += 1;
    return false;
  });
  return { sdp: lines.join('\r\n'), dropped };
}

function mayProbe(address: string, port: number, viewer: Viewer): boolean {
  if (address.toLowerCase().endsWith('.local')) return true;
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.process(address);
  const own = normalised(viewer.address);
  if (own !== undefined && ip.toString() === own) return true;
  const viewerHere = own !== undefined && (ipaddr.process(own).range() === 'loopback' || viewer.ownAddresses.has(own));
  if (viewerHere && (ip.range() === 'loopback' || viewer.ownAddresses.has(ip.toString()))) return true;
  return viewer.policy.check(ip.toString(), port) === null;
}

function normalised(address: string): string | undefined {
  return ipaddr.isValid(address) ? ipaddr.process(address).toString() : undefined;
}

interface Peer {
  id: string;
  pc: RTCPeerConnection;
  track: MediaStreamTrack;
  feed: Feed;
  timer?: NodeJS.Timeout;
}

/** One video source per watched session, shared by all its peers: each frame is decoded once. */
interface Feed {
  sessionId: string;
  source: RTCVideoSource;
  peers: Map<string, Peer>;
  removeConsumer: () => void;
  pendingJpeg?: Buffer;
  decoding: boolean;
  lastDecodeAt: number;
  lastFrame?: RTCVideoFrame;
  lastSentAt: number;
  repeatTimer: NodeJS.Timeout;
  decodeTimer?: NodeJS.Timeout;
}

const slotKey = (sessionId: string) => `bas:whep:${sessionId}`;

let wrtcModule: Promise<Wrtc> | undefined;
/** The native WebRTC module is loaded on first use: an API that nobody watches over WHEP never pays for it. */
const loadWrtc = (): Promise<Wrtc> => (wrtcModule ??= import('@roamhq/wrtc'));

/**
 * WHEP egress of the live screen: each POSTed offer gets a peer connection of
 * @roamhq/wrtc with one send-only VP8 video track fed from the session's frames.
 */
export class WhepEndpoint {
  private readonly feeds = new Map<string, Feed>();
  private readonly decoder = new JpegDecoder();
  private readonly opts: WhepOptions;

  constructor(
    /** `slots`: the per-session cap counted across every API instance (Redis), not only this one. */
    private readonly deps: { hub: FrameHub; logger: Logger; slots?: RedisSlots },
    options: Partial<WhepOptions> = {},
  ) {
    this.opts = { ...DEFAULTS, ...options };
  }

  /** Answers an SDP offer; the resource id names the peer for DELETE. */
  async answer(sessionId: string, offered: string, viewer: Viewer): Promise<{ resourceId: string; answerSdp: string }> {
    const { sdp: offerSdp, dropped } = offerWithinGuard(offered, viewer);
    if (dropped) this.deps.logger.info({ sessionId, dropped }, 'WHEP offer: candidates the network guard does not allow left out');
    const wrtc = await loadWrtc();
    const max = this.opts.maxPeersPerSession;
    const tooMany = () => new ServiceError('TOO_MANY_VIEWERS', `At most ${max} WebRTC viewers per session; end one (DELETE its resource) first`, { limit: max });
    if ((this.feeds.get(sessionId)?.peers.size ?? 0) >= max) throw tooMany();
    const id = randomBytes(12).toString('hex');
    if (this.deps.slots && !(await this.deps.slots.acquire(slotKey(sessionId), id, max)).ok) throw tooMany();
    let pc: RTCPeerConnection;
    try {
      pc = new wrtc.RTCPeerConnection({ iceServers: this.opts.iceServers });
    } catch (err) {
      this.releaseSlot(sessionId, id);
      throw err;
    }
    let peer: Peer | undefined;
    try {
      try {
        await pc.setRemoteDescription({ type: 'offer', sdp: offerSdp });
      } catch (err) {
        throw new InvalidParamsError(`The SDP offer was refused: ${err instanceof Error ? err.message : String(err)}`);
      }
      const transceivers = pc.getTransceivers();
      const video = transceivers.find((t) => t.receiver.track?.kind === 'video');
      if (!video) throw new InvalidParamsError('The SDP offer has no video section');
      for (const t of transceivers) if (t !== video) t.direction = 'inactive';

      const feed = this.feed(wrtc, sessionId);
      try {
        peer = { id, pc, track: feed.source.createTrack(), feed };
      } finally {
        if (!peer) this.releaseIfIdle(feed);
      }
      feed.peers.set(peer.id, peer);
      await video.sender.replaceTrack(peer.track);
      video.direction = 'sendonly';
      await pc.setLocalDescription(await pc.createAnswer());
      await this.gathered(pc);
      const gatheredSdp = pc.localDescription?.sdp;
      const answerSdp = gatheredSdp && !this.opts.privateCandidates ? withoutPrivateCandidates(gatheredSdp) : gatheredSdp;
      if (!answerSdp) throw new ServiceError('WEBRTC_ERROR', 'No SDP answer was produced');
      this.watch(peer);
      return { resourceId: peer.id, answerSdp };
    } catch (err) {
      if (peer) this.closePeer(peer);
      else {
        pc.close();
        this.releaseSlot(sessionId, id);
      }
      throw err;
    }
  }

  private releaseSlot(sessionId: string, id: string): void {
    this.deps.slots?.release(slotKey(sessionId), id).catch((err) => this.deps.logger.warn({ sessionId, err }, 'WHEP slot not released'));
  }

  /** Ends one peer (WHEP DELETE); false when it is not known. */
  close(sessionId: string, resourceId: string): boolean {
    const peer = this.feeds.get(sessionId)?.peers.get(resourceId);
    if (!peer) return false;
    this.closePeer(peer);
    return true;
  }

  peers(sessionId: string): number {
    return this.feeds.get(sessionId)?.peers.size ?? 0;
  }

  async closeAll(): Promise<void> {
    for (const feed of [...this.feeds.values()]) for (const peer of [...feed.peers.values()]) this.closePeer(peer);
    await this.decoder.close();
  }

  private feed(wrtc: Wrtc, sessionId: string): Feed {
    const existing = this.feeds.get(sessionId);
    if (existing) return existing;
    const feed: Feed = {
      sessionId,
      source: new wrtc.nonstandard.RTCVideoSource({ isScreencast: true }),
      peers: new Map(),
      removeConsumer: () => undefined,
      decoding: false,
      lastDecodeAt: 0,
      lastSentAt: 0,
      repeatTimer: setInterval(() => {
        if (feed.lastFrame && Date.now() - feed.lastSentAt >= this.opts.repeatMs * 0.9) this.send(feed);
      }, this.opts.repeatMs),
    };
    feed.repeatTimer.unref();
    this.feeds.set(sessionId, feed);
    feed.removeConsumer = this.deps.hub.add(sessionId, {
      frame: (jpeg) => {
        feed.pendingJpeg = jpeg;
        this.pump(wrtc, feed);
      },
      end: () => {
        for (const peer of [...feed.peers.values()]) this.closePeer(peer);
      },
    });
    const latest = this.deps.hub.latest(sessionId);
    if (latest) {
      feed.pendingJpeg = latest;
      this.pump(wrtc, feed);
    }
    return feed;
  }

  /** Decodes the newest pending JPEG; frames that arrive meanwhile replace each other. */
  private pump(wrtc: Wrtc, feed: Feed): void {
    if (feed.decoding || feed.decodeTimer || !feed.pendingJpeg || this.feeds.get(feed.sessionId) !== feed) return;
    const wait = feed.lastDecodeAt + this.opts.minDecodeIntervalMs - Date.now();
    if (wait > 0) {
      feed.decodeTimer = setTimeout(() => {
        feed.decodeTimer = undefined;
        this.pump(wrtc, feed);
      }, wait);
      return;
    }
    const jpeg = feed.pendingJpeg;
    feed.pendingJpeg = undefined;
    feed.decoding = true;
    feed.lastDecodeAt = Date.now();
    this.decoder
      .decode(jpeg)
      .then((rgba) => {
        const i420: RTCVideoFrame = { width: VIDEO_WIDTH, height: VIDEO_HEIGHT, data: new Uint8Array(i420Size(VIDEO_WIDTH, VIDEO_HEIGHT)) };
        wrtc.nonstandard.rgbaToI420(rgba, i420);
        feed.lastFrame = i420;
        this.send(feed);
      })
      .catch((err) => this.deps.logger.debug({ sessionId: feed.sessionId, err: String(err) }, 'frame not decoded'))
      .finally(() => {
        feed.decoding = false;
        this.pump(wrtc, feed);
      });
  }

  private send(feed: Feed): void {
    if (!feed.lastFrame) return;
    feed.lastSentAt = Date.now();
    try {
      feed.source.onFrame(feed.lastFrame);
    } catch (err) {
      this.deps.logger.warn({ sessionId: feed.sessionId, err }, 'video frame refused');
    }
  }

  private gathered(pc: RTCPeerConnection): Promise<void> {
    return new Promise((resolve) => {
      if (pc.iceGatheringState === 'complete') return resolve();
      const timer = setTimeout(done, this.opts.iceGatheringTimeoutMs);
      function done() {
        clearTimeout(timer);
        pc.removeEventListener('icegatheringstatechange', onChange);
        resolve();
      }
      function onChange() {
        if (pc.iceGatheringState === 'complete') done();
      }
      pc.addEventListener('icegatheringstatechange', onChange);
    });
  }

  private watch(peer: Peer): void {
    const log = this.deps.logger.child({ sessionId: peer.feed.sessionId, peer: peer.id });
    const arm = (ms: number, why: string) => {
      clearTimeout(peer.timer);
      peer.timer = setTimeout(() => {
        log.debug(why);
        this.closePeer(peer);
      }, ms);
      peer.timer.unref();
    };
    arm(this.opts.connectTimeoutMs, 'WHEP peer never connected');
    peer.pc.addEventListener('connectionstatechange', () => {
      const state = peer.pc.connectionState;
      if (state === 'connected') clearTimeout(peer.timer);
      else if (state === 'disconnected') arm(this.opts.disconnectGraceMs, 'WHEP peer did not come back');
      else if (state === 'failed' || state === 'closed') this.closePeer(peer);
    });
    log.debug('WHEP peer answered');
  }

  private closePeer(peer: Peer): void {
    const feed = peer.feed;
    if (!feed.peers.delete(peer.id)) return;
    this.releaseSlot(feed.sessionId, peer.id);
    clearTimeout(peer.timer);
    peer.track.stop();
    peer.pc.close();
    this.releaseIfIdle(feed);
  }

  private releaseIfIdle(feed: Feed): void {
    if (feed.peers.size > 0 || this.feeds.get(feed.sessionId) !== feed) return;
    this.feeds.delete(feed.sessionId);
    clearInterval(feed.repeatTimer);
    clearTimeout(feed.decodeTimer);
    feed.removeConsumer();
  }
}
