import dgram from 'node:dgram';
import jpeg from 'jpeg-js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';
import { connectSession, emitWithAck } from '../support/socket';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}]`;
const send = (key: string, sessionId: string, message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message } });

interface Session {
  sessionId: string;
  taskId?: string;
  streaming: { webRTCURL: string; webViewURL: string; dimensions: { width: number; height: number } };
}

/** A session whose page shows manual.html (from a finished first task). */
async function sessionOnManualPage(key: string): Promise<Session> {
  const t = token('live-open');
  await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'opened' } }] });
  const res = await api(base(), 'POST', '/start/start-session', { key, body: { task: { prompt: `${t} open the page`, startingUrl: `${fixtures()}/manual.html` } } });
  expect(res.status).toBe(200);
  const s = res.body as Session;
  await waitFor(async () => (await api(base(), 'GET', `/task/${s.sessionId}/${s.taskId}`)).body.type === 'task_completed', 20_000);
  return s;
}

/** Reads the JPEG parts of an MJPEG response one by one. */
function mjpegParts(res: Response) {
  const reader = res.body!.getReader();
  let buf = Buffer.alloc(0);
  return {
    async next(timeoutMs = 10_000): Promise<Buffer | null> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const head = /Content-Type: image\/jpeg\r\nContent-Length: (\d+)\r\n\r\n/.exec(buf.toString('latin1'));
        if (head) {
          const start = head.index + head[0].length;
          const end = start + Number(head[1]);
          if (buf.length >= end) {
            const part = Buffer.from(buf.subarray(start, end));
            buf = buf.subarray(end);
            return part;
          }
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no MJPEG frame in time');
        let timer: NodeJS.Timeout | undefined;
        const chunk = await Promise.race([reader.read(), new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), left)))]);
        clearTimeout(timer);
        if (chunk === 'timeout') continue;
        if (chunk.done) return null;
        buf = Buffer.concat([buf, Buffer.from(chunk.value)]);
      }
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

/** Where a point of the session's page is on the viewer's screen (the picture is fitted with object-fit: contain). */
async function onScreen(viewer: Page, pageX: number, pageY: number): Promise<{ x: number; y: number }> {
  const r = await viewer.locator('#screen').evaluate((el) => {
    const b = el.getBoundingClientRect();
    return { left: b.left, top: b.top, width: b.width, height: b.height };
  });
  const scale = Math.min(r.width / 1024, r.height / 600);
  const shownWidth = 1024 * scale;
  const shownHeight = 600 * scale;
  return { x: r.left + (r.width - shownWidth) / 2 + (pageX / 1024) * shownWidth, y: r.top + (r.height - shownHeight) / 2 + (pageY / 600) * shownHeight };
}

const logText = (viewer: Page) => viewer.locator('#log').innerText();

describe('the live view', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu', '--use-fake-ui-for-media-stream', '--autoplay-policy=no-user-gesture-required'],
    });
  });
  afterAll(() => browser?.close());

  it('opens only with the session’s own view token, and only while the session lives', async () => {
    const { apiKey: key } = await createUser();
    const a = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body as Session;
    const b = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body as Session;
    const view = new URL(a.streaming.webViewURL);
    const whep = new URL(a.streaming.webRTCURL);
    expect(view.pathname).toBe(`/view/${a.sessionId}`);
    expect(whep.pathname).toBe(`/whep/${a.sessionId}`);
    const goodToken = view.searchParams.get('token')!;
    const otherToken = new URL(b.streaming.webViewURL).searchParams.get('token')!;
    const sdp = { 'content-type': 'application/sdp' };

    for (const path of [
      `/view/${a.sessionId}`,
      `/view/${a.sessionId}?token=wrong`,
      `/view/${a.sessionId}?token=${otherToken}`,
      `/view/${'f'.repeat(32)}?token=${goodToken}`,
      `/view/${a.sessionId}/stream?token=${otherToken}`,
    ]) {
      const res = await api(base(), 'GET', path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { success: false, error: expect.any(String), message: expect.any(String), code: 'NOT_FOUND' } });
    }
    expect((await api(base(), 'POST', `/whep/${a.sessionId}?token=${otherToken}`, { rawBody: 'v=0', headers: sdp })).status).toBe(404);
    expect((await api(base(), 'POST', `/whep/${a.sessionId}`, { rawBody: 'v=0', headers: sdp })).status).toBe(404);

    const page = await api(base(), 'GET', `${view.pathname}${view.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('id="screen"');

    const whepPath = `${whep.pathname}${whep.search}`;
    const wrongType = await api(base(), 'POST', whepPath, { body: { sdp: 'v=0' } });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body).toMatchObject({ success: false, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect((await api(base(), 'POST', whepPath, { rawBody: '', headers: sdp })).status).toBe(400);
    expect((await api(base(), 'POST', whepPath, { rawBody: 'this is no SDP', headers: sdp })).status).toBe(400);
    expect((await api(base(), 'DELETE', `/whep/${a.sessionId}/0123456789abcdef01234567`)).status).toBe(404);

    await send(key, a.sessionId, { actionType: 'state', newState: 'terminate' });
    await send(key, b.sessionId, { actionType: 'state', newState: 'terminate' });
    await waitFor(async () => (await api(base(), 'GET', `${view.pathname}${view.search}`)).status === 404, 10_000);
    expect((await api(base(), 'POST', whepPath, { rawBody: 'v=0', headers: sdp })).status).toBe(404);
  });

  it('streams the page as MJPEG from the first frame and ends the stream with the session', async () => {
    const { apiKey: key } = await createUser();
    const s = await sessionOnManualPage(key);
    const startedAt = Date.now();
    const res = await fetch(s.streaming.webViewURL.replace('?', '/stream?'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/x-mixed-replace; boundary=frame');
    const parts = mjpegParts(res);
    const first = await parts.next();
    const firstFrameMs = Date.now() - startedAt;
    expect(first).not.toBeNull();
    const img = jpeg.decode(first!, { useTArray: true });
    expect({ width: img.width, height: img.height }).toEqual({ width: 1024, height: 600 });
    // a still page: the first picture comes from the screenshot taken when the screencast starts
    expect(firstFrameMs).toBeLessThan(5000);

    // a viewer coming back while the page is still (a reload) gets the picture at once too
    await parts.cancel();
    await new Promise((r) => setTimeout(r, 500)); // the API lets go of the session's frames meanwhile
    const reloaded = mjpegParts(await fetch(s.streaming.webViewURL.replace('?', '/stream?')));
    expect(await reloaded.next(3000)).not.toBeNull();

    // the page changes (a manual TYPE into its field): new frames follow
    const typedAt = Date.now();
    expect((await send(key, s.sessionId, { actionType: 'interaction', action: { type: 'CLICK', x: 550, y: 110 + 155 } })).status).toBe(200);
    expect((await send(key, s.sessionId, { actionType: 'interaction', action: { type: 'TYPE', text: 'x' } })).status).toBe(200);
    const changed = await reloaded.next();
    expect(changed).not.toBeNull();
    expect(Date.now() - typedAt).toBeLessThan(5000);

    await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    // the stream ends; frames still in flight may come first
    await waitFor(async () => (await reloaded.next(8000)) === null, 15_000, 0);
  });

  it('caps MJPEG viewers per session (429 past MJPEG_MAX_VIEWERS_PER_SESSION) and frees a slot when a viewer leaves', async () => {
    const { apiKey: key } = await createUser();
    const s = await sessionOnManualPage(key);
    const url = s.streaming.webViewURL.replace('?', '/stream?');
    const viewers: AbortController[] = [];
    // The responses stay referenced: fetch cancels the body of a response it collects as garbage,
    // which would close that viewer and free its slot before the 11th asks.
    const open: Response[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        const ac = new AbortController();
        viewers.push(ac);
        const res = await fetch(url, { signal: ac.signal });
        open.push(res);
        expect(res.status).toBe(200);
      }
      const refused = await fetch(url);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ success: false, code: 'TOO_MANY_VIEWERS', details: { limit: 10 } });
      viewers.pop()!.abort();
      await waitFor(async () => {
        const again = await fetch(url);
        if (again.status !== 200) return null;
        await again.body?.cancel();
        return true;
      }, 10_000);
    } finally {
      viewers.forEach((v) => v.abort());
      open.length = 0;
      await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    }
  });

  it('lets a viewer watch, take over, click, double click and type on the page, and release', async () => {
    const { apiKey: key } = await createUser();
    const s = await sessionOnManualPage(key);
    const viewer = await browser.newPage({ viewport: { width: 900, height: 700 } });
    try {
      await viewer.goto(s.streaming.webViewURL);
      await viewer.waitForFunction(() => (document.getElementById('screen') as HTMLImageElement).naturalWidth === 1024, null, { timeout: 15_000 });
      expect(await viewer.locator('#screen').evaluate((el: HTMLImageElement) => el.naturalHeight)).toBe(600);
      // the first task's events are replayed into the log, dated when they happened (before this viewer connected)
      await waitFor(async () => /task_completed\s*opened/.test(await logText(viewer)), 10_000);
      const dated = async (type: string) => Date.parse((await viewer.locator(`#log [data-type="${type}"] time`).first().getAttribute('datetime')) ?? '');
      expect(await dated('task_completed')).toBeLessThan(await dated('connection'));

      await viewer.click('#takeover');
      await viewer.waitForFunction(() => document.getElementById('takeover')!.textContent === 'Release', null, { timeout: 10_000 });
      await waitFor(async () => /Manual control taken/.test(await logText(viewer)), 10_000);

      // manual.html: the button "Big target" spans (100,100)-(300,200), the field starts at (400,100)
      const target = await onScreen(viewer, 200, 150);
      await viewer.mouse.click(target.x, target.y);
      await waitFor(async () => /manual_click/.test(await logText(viewer)), 10_000);
      await viewer.mouse.dblclick(target.x, target.y);
      await waitFor(async () => /manual_double_click/.test(await logText(viewer)), 10_000);
      const field = await onScreen(viewer, 450, 110);
      await viewer.mouse.click(field.x, field.y);
      await viewer.keyboard.type('hi');
      await viewer.keyboard.press('Enter');
      await waitFor(async () => /manual_key_press/.test(await logText(viewer)), 10_000);
      const log = await logText(viewer);
      expect(log).toMatch(/manual_type/);
      expect(log).not.toMatch(/\berror\b/);

      await viewer.click('#takeover');
      await viewer.waitForFunction(() => document.getElementById('takeover')!.textContent === 'Take over', null, { timeout: 10_000 });

      // the agent reads what the viewer did to the page
      const t = token('live-after');
      await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(clicks=\\d+ dblclicks=\\d+ typed=\\[[^\\]]*\\] keys=\\[[^\\]]*\\])}}' } }] });
      const seen = await send(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} report the status line` });
      // a double click is also two clicks
      expect(seen.body.data.message).toBe('clicks=3 dblclicks=1 typed=[hi] keys=[Enter]');

      await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
      await waitFor(async () => /end_session/.test(await logText(viewer)), 10_000);
      await viewer.waitForFunction(() => /ended/.test(document.getElementById('status')!.textContent ?? ''), null, { timeout: 10_000 });
      expect(await viewer.locator('#takeover').isDisabled()).toBe(true);
    } finally {
      await viewer.close();
    }
  });

  it('shows who holds the browser when it opens, and follows takeovers and releases made anywhere else', async () => {
    const { apiKey: key } = await createUser();
    const s = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body as Session;
    const interact = (type: string) => send(key, s.sessionId, { actionType: 'interaction', action: { type } });
    const buttonSays = (viewer: Page, text: string) =>
      viewer.waitForFunction((t) => { const b = document.getElementById('takeover') as HTMLButtonElement; return b.textContent === t && !b.disabled; }, text, { timeout: 10_000 });
    expect((await interact('takeOverControl')).body).toMatchObject({ success: true });
    const first = await browser.newPage({ viewport: { width: 900, height: 700 } });
    const second = await browser.newPage({ viewport: { width: 900, height: 700 } });
    const live = await connectSession(base(), { sessionId: s.sessionId });
    try {
      // opened on a session taken over through the API: the viewer can click at once
      await first.goto(s.streaming.webViewURL, { waitUntil: 'domcontentloaded' });
      await buttonSays(first, 'Release');
      const point = await onScreen(first, 200, 150);
      await first.mouse.click(point.x, point.y);
      await waitFor(async () => /manual_click/.test(await logText(first)), 10_000);

      // released through the socket
      expect(await emitWithAck(live.socket, { actionType: 'interaction', action: { type: 'releaseControl' } })).toMatchObject({ success: true });
      await buttonSays(first, 'Take over');
      // another viewer's page takes over, then the API releases
      await second.goto(s.streaming.webViewURL, { waitUntil: 'domcontentloaded' });
      await buttonSays(second, 'Take over');
      await second.click('#takeover');
      await buttonSays(second, 'Release');
      await buttonSays(first, 'Release');
      expect((await interact('releaseControl')).body).toMatchObject({ success: true });
      await buttonSays(first, 'Take over');
      await buttonSays(second, 'Take over');
      // taken over through the socket, released from a page
      expect(await emitWithAck(live.socket, { actionType: 'interaction', action: { type: 'takeOverControl' } })).toMatchObject({ success: true });
      await buttonSays(first, 'Release');
      await buttonSays(second, 'Release');
      await first.click('#takeover');
      await buttonSays(second, 'Take over');
      await buttonSays(first, 'Take over');
      expect(await logText(first)).not.toMatch(/\berror\b/);
    } finally {
      live.socket.close();
      await first.close();
      await second.close();
      await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    }
  });

  it('streams the screen over WHEP to a browser on another origin, 1024 x 600, until the viewer deletes it', async () => {
    const { apiKey: key } = await createUser();
    const s = await sessionOnManualPage(key);
    const player = await browser.newPage();
    try {
      await player.goto(`${fixtures()}/manual.html`);
      const result = await player.evaluate(async (whepUrl) => {
        const started = performance.now();
        const pc = new RTCPeerConnection();
        pc.addTransceiver('video', { direction: 'recvonly' });
        const video = document.createElement('video');
        video.muted = true;
        video.autoplay = true;
        document.body.appendChild(video);
        pc.ontrack = (e) => (video.srcObject = e.streams[0] ?? new MediaStream([e.track]));
        await pc.setLocalDescription(await pc.createOffer());
        // not trickled: the offer carries the candidates
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 2000);
          pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && (clearTimeout(t), resolve());
        });
        const res = await fetch(whepUrl, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: pc.localDescription!.sdp });
        const answer = await res.text();
        const location = res.headers.get('location');
        if (res.status !== 201 || !location) return { status: res.status, answer };
        await pc.setRemoteDescription({ type: 'answer', sdp: answer });
        for (let i = 0; i < 150 && !(video.videoWidth === 1024 && video.videoHeight === 600); i++) await new Promise((r) => setTimeout(r, 100));
        const firstFrameMs = performance.now() - started;
        const size = { width: video.videoWidth, height: video.videoHeight };
        // still page: frames keep coming (the server repeats the latest one)
        const decoded = async () => {
          let n = 0;
          (await pc.getStats()).forEach((r) => r.type === 'inbound-rtp' && r.kind === 'video' && (n = r.framesDecoded));
          return n;
        };
        const before = await decoded();
        await new Promise((r) => setTimeout(r, 1000));
        const framesPerSecond = (await decoded()) - before;
        const deleteUrl = new URL(location, whepUrl).href;
        const deleted = (await fetch(deleteUrl, { method: 'DELETE' })).status;
        const deletedAgain = (await fetch(deleteUrl, { method: 'DELETE' })).status;
        pc.close();
        return { status: res.status, contentType: res.headers.get('content-type'), location, size, firstFrameMs, framesPerSecond, deleted, deletedAgain, answerHasVp8: /VP8\/90000/.test(answer) };
      }, s.streaming.webRTCURL);

      expect(result).toMatchObject({
        status: 201,
        contentType: 'application/sdp',
        location: expect.stringMatching(new RegExp(`^/whep/${s.sessionId}/[0-9a-f]+$`)),
        size: { width: 1024, height: 600 },
        answerHasVp8: true,
        deleted: 204,
        deletedAgain: 404,
      });
      expect(result.framesPerSecond).toBeGreaterThanOrEqual(5);
    } finally {
      await player.close();
      await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    }
  });

  it("probes only the addresses the network guard allows from a viewer's WHEP offer: an inside address listed by a viewer elsewhere gets nothing", async () => {
    const { apiKey: key } = await createUser();
    const s = await sessionOnManualPage(key);
    const player = await browser.newPage();
    const inside = dgram.createSocket('udp4');
    const probes: string[] = [];
    inside.on('message', (_msg, from) => probes.push(`${from.address}:${from.port}`));
    await new Promise<void>((resolve) => inside.bind(0, '127.0.0.1', resolve));
    const { port } = inside.address();
    try {
      await player.goto(`${fixtures()}/manual.html`);
      const offer = await player.evaluate(async () => {
        const pc = new RTCPeerConnection();
        pc.addTransceiver('video', { direction: 'recvonly' });
        await pc.setLocalDescription(await pc.createOffer());
        const sdp = pc.localDescription!.sdp;
        pc.close();
        return sdp;
      });
      // The offer lists one candidate only: the "inside service" on this machine's loopback.
      const listed = offer.replace(/a=candidate:[^\r\n]*\r\n/g, '').replace(/(a=mid:[^\r\n]*\r\n)/, `$1a=candidate:1 1 udp 2122260223 127.0.0.1 ${port} typ host generation 0\r\n`);
      /** Connectivity checks start within the answer's gathering (≤ 2 s): 3 s without a probe is none; an awaited one ends the wait. */
      const offerFrom = async (headers: Record<string, string>, probeAwaited: boolean) => {
        const res = await fetch(s.streaming.webRTCURL, { method: 'POST', headers: { 'content-type': 'application/sdp', ...headers }, body: listed });
        expect(res.status).toBe(201);
        const until = Date.now() + 3000;
        while (Date.now() < until && !(probeAwaited && probes.length > 0)) await new Promise((r) => setTimeout(r, 100));
        await fetch(new URL(res.headers.get('location')!, s.streaming.webRTCURL), { method: 'DELETE' });
      };
      // A viewer elsewhere (its address as a trusted proxy forwards it): loopback is not its to list.
      await offerFrom({ 'x-forwarded-for': '203.0.113.7' }, false);
      expect(probes).toEqual([]);
      // A viewer on this machine may: the same offer is checked, so the probe above would have been seen.
      await offerFrom({}, true);
      expect(probes.length).toBeGreaterThan(0);
    } finally {
      inside.close();
      await player.close();
      await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
    }
  });
});
