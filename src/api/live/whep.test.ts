import { runInThisContext } from 'node:vm';
import wrtc from '@roamhq/wrtc';
import jpeg from 'jpeg-js';
import pino from 'pino';
import { ServiceError } from '../../contracts/errors';
import type { FrameConsumer, FrameHub } from './frame-hub';
import { AddressPolicy, ownAddressSet, parseAllowlist } from '../../contracts/address-policy';
import { offerWithinGuard, WhepEndpoint, withoutPrivateCandidates, type Viewer } from './whep';

/** A viewer on this machine: its offer's loopback and own addresses may be probed. */
const HERE: Viewer = { address: '127.0.0.1', policy: new AddressPolicy(), ownAddresses: new Set() };

/** The hub's surface the WHEP endpoint uses, driven by hand. */
class StubHub {
  readonly consumers = new Map<string, Set<FrameConsumer>>();
  latestFrame?: Buffer;
  add(sessionId: string, c: FrameConsumer) {
    const set = this.consumers.get(sessionId) ?? new Set();
    set.add(c);
    this.consumers.set(sessionId, set);
    return () => {
      set.delete(c);
      if (!set.size) this.consumers.delete(sessionId);
    };
  }
  latest() {
    return this.latestFrame;
  }
  push(sessionId: string, frame: Buffer) {
    for (const c of this.consumers.get(sessionId) ?? []) c.frame(frame);
  }
  end(sessionId: string) {
    const set = this.consumers.get(sessionId);
    this.consumers.delete(sessionId);
    for (const c of set ?? []) c.end();
  }
}

const solid = (width: number, height: number, rgb: [number, number, number]) => {
  const data = Buffer.alloc(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set([...rgb, 255], i);
  return jpeg.encode({ width, height, data }, 80).data;
};

async function gathered(pc: RTCPeerConnection): Promise<void> {
  if (pc.iceGatheringState === 'complete') return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 2000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') {
        clearTimeout(t);
        resolve();
      }
    });
  });
}

/** A WHEP player in Node: a receive-only offer, then the frames of the remote track. */
async function player(whep: WhepEndpoint, sessionId: string) {
  const pc = new wrtc.RTCPeerConnection({ iceServers: [] });
  pc.addTransceiver('video', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await gathered(pc);
  const answer = await whep.answer(sessionId, pc.localDescription!.sdp, HERE);
  await pc.setRemoteDescription({ type: 'answer', sdp: answer.answerSdp });
  const frames: { width: number; height: number; at: number }[] = [];
  const sink = new wrtc.nonstandard.RTCVideoSink(pc.getReceivers()[0].track);
  sink.onframe = ({ frame }: { frame: { width: number; height: number } }) => frames.push({ width: frame.width, height: frame.height, at: Date.now() });
  return {
    pc,
    answer,
    frames,
    close: () => {
      sink.stop();
      pc.close();
    },
  };
}

const until = async (cond: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 25));
  }
};

// A process that created WebRTC media sources segfaults in @roamhq/wrtc's native teardown
// when it exits on its own (https://github.com/node-webrtc/node-webrtc/issues/636), as
// jest does when it runs this file in band. Exiting explicitly skips that teardown; the
// process object of the test sandbox is a copy, so the real one is taken from the outer realm.
afterAll(() => {
  const realProcess = runInThisContext('process') as NodeJS.Process;
  realProcess.once('beforeExit', () => realProcess.exit());
});

describe('WHEP answers', () => {
  const sdp = [
    'v=0',
    'a=candidate:1 1 udp 2122260223 10.0.3.7 50000 typ host generation 0',
    'a=candidate:2 1 udp 2122194687 127.0.0.1 50001 typ host generation 0',
    'a=candidate:3 1 udp 2122129151 fd00::5 50002 typ host generation 0',
    'a=candidate:4 1 udp 1686052607 93.184.216.34 50003 typ srflx raddr 10.0.3.7 rport 50000 generation 0',
    'a=candidate:5 1 udp 2122063615 4d0c2f5a-1f3b-4c1e-9e0a-2d5c7b1a9f00.local 50004 typ host generation 0',
    'a=sendonly',
  ].join('\r\n');

  it('drop candidates on private, loopback and unique-local addresses, and keep public and mDNS ones', () => {
    const out = withoutPrivateCandidates(sdp).split('\r\n');
    expect(out).toEqual(['v=0', sdp.split('\r\n')[4], sdp.split('\r\n')[5], 'a=sendonly']);
  });

  it("keep a viewer's offer within the network guard: its own address, public and mDNS ones, this machine only for a viewer on it, and the allowlist", () => {
    const lines = sdp.split('\r\n');
    const kept = (viewer: Viewer) => offerWithinGuard(sdp, viewer).sdp.split('\r\n');
    const outside: Viewer = { address: '203.0.113.9', policy: new AddressPolicy([], ownAddressSet(['10.0.3.7'])), ownAddresses: ownAddressSet(['10.0.3.7']) };
    expect(kept(outside)).toEqual(['v=0', lines[4], lines[5], 'a=sendonly']);
    expect(offerWithinGuard(sdp, outside).dropped).toBe(3);
    expect(kept({ ...outside, address: '10.0.3.7' })).toEqual(['v=0', lines[1], lines[2], lines[4], lines[5], 'a=sendonly']);
    expect(kept({ ...outside, address: '::ffff:127.0.0.1' })).toEqual(['v=0', lines[1], lines[2], lines[4], lines[5], 'a=sendonly']);
    expect(kept({ ...outside, address: 'fd00::5' })).toEqual(['v=0', lines[3], lines[4], lines[5], 'a=sendonly']);
    expect(kept({ ...outside, policy: new AddressPolicy(parseAllowlist('10.0.0.0/8')) })).toEqual(['v=0', lines[1], lines[4], lines[5], 'a=sendonly']);
  });

  it('list them when the operator allows it (WHEP_PRIVATE_CANDIDATES)', async () => {
    const hub = new StubHub();
    const open = new WhepEndpoint({ hub: hub as unknown as FrameHub, logger: pino({ level: 'silent' }) }, { privateCandidates: true });
    try {
      const p = await player(open, 's9');
      expect(p.answer.answerSdp).toMatch(/a=candidate:\S+ \d+ \S+ \d+ (10|127|172|192)\./);
      p.close();
    } finally {
      await open.closeAll();
    }
  });
});

describe('WHEP egress', () => {
  let hub: StubHub;
  let whep: WhepEndpoint;
  const players: { close(): void }[] = [];

  beforeEach(() => {
    hub = new StubHub();
    whep = new WhepEndpoint({ hub: hub as unknown as FrameHub, logger: pino({ level: 'silent' }) });
  });
  afterEach(async () => {
    players.splice(0).forEach((p) => p.close());
    await whep.closeAll();
  });

  it('answers an offer with a send-only VP8 track that carries the frames at 1024 x 600 and repeats a still one', async () => {
    const p = await player(whep, 's1');
    players.push(p);
    expect(p.answer.resourceId).toMatch(/^[0-9a-f]{24}$/);
    expect(p.answer.answerSdp).toMatch(/a=sendonly/);
    expect(p.answer.answerSdp).toMatch(/VP8\/90000/);
    // The API host's private addresses are not in the answer; the viewer still connects (below).
    expect(p.answer.answerSdp).not.toMatch(/a=candidate:\S+ \d+ \S+ \d+ (10|127|172|192)\./);
    expect(whep.peers('s1')).toBe(1);
    expect(hub.consumers.get('s1')?.size).toBe(1);

    hub.push('s1', solid(1024, 600, [200, 30, 30]));
    await until(() => p.frames.length > 0);
    expect(p.frames[0]).toMatchObject({ width: 1024, height: 600 });
    // no new JPEG: the last frame keeps coming about every 100 ms
    const seen = p.frames.length;
    // repeated about every 100 ms (a loaded 2-core machine delivers them later, not never)
    await until(() => p.frames.length - seen >= 2);

    // another size is fitted into the video
    hub.push('s1', solid(640, 480, [30, 200, 30]));
    await new Promise((r) => setTimeout(r, 300));
    expect(p.frames[p.frames.length - 1]).toMatchObject({ width: 1024, height: 600 });
  });

  it('shares one subscription among the peers of a session, and lets go of it with the last', async () => {
    hub.latestFrame = solid(1024, 600, [10, 10, 10]);
    const a = await player(whep, 's1');
    const b = await player(whep, 's1');
    players.push(a, b);
    expect(whep.peers('s1')).toBe(2);
    expect(hub.consumers.get('s1')?.size).toBe(1);
    // the frame the hub already had is shown without waiting for a new one
    await until(() => a.frames.length > 0 && b.frames.length > 0);

    expect(whep.close('s1', 'nope')).toBe(false);
    expect(whep.close('s2', a.answer.resourceId)).toBe(false);
    expect(whep.close('s1', a.answer.resourceId)).toBe(true);
    expect(whep.close('s1', a.answer.resourceId)).toBe(false);
    expect(whep.peers('s1')).toBe(1);
    expect(whep.close('s1', b.answer.resourceId)).toBe(true);
    expect(hub.consumers.has('s1')).toBe(false);
  });

  it('closes the peers of a session that ends', async () => {
    const p = await player(whep, 's1');
    players.push(p);
    hub.end('s1');
    expect(whep.peers('s1')).toBe(0);
  });

  it('refuses offers it cannot answer with a 400', async () => {
    await expect(whep.answer('s1', 'v=0\r\nnot sdp', HERE)).rejects.toMatchObject({ status: 400 });
    const pc = new wrtc.RTCPeerConnection();
    pc.createDataChannel('x');
    await pc.setLocalDescription(await pc.createOffer());
    const refused = await whep.answer('s1', pc.localDescription!.sdp, HERE).catch((e: unknown) => e);
    pc.close();
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ status: 400, message: expect.stringMatching(/no video/) });
    expect(whep.peers('s1')).toBe(0);
    expect(hub.consumers.has('s1')).toBe(false);
  });
});
