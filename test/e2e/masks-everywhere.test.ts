/**
 * What a session keeps masked beyond the model's view: the texts of its recording (what the
 * page wrote into a button, a link or a frame's address), what a person types into a secret
 * field inside a frame and a shadow root, the pictures of fields in the top layer, and where
 * a secret's `match` lets it be typed. Two sites of the test's own on two loopback ports, the
 * scripted model, the real API, Temporal, worker and Chromium.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript } from '../support/scripted-model';
import { createUser, ROOT, serviceEnv, startService, type ServiceProcess } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

interface Site {
  url: string;
  port: number;
  hits: URL[];
  close(): Promise<void>;
}

/** A site on an allowed port serving the pages given per path (and the fixtures). */
async function startSite(pages: Record<string, (u: URL) => string>): Promise<Site> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url);
    const page = pages[url.pathname];
    if (page) return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(url));
    const file = path.join(ROOT, 'test/fixtures', path.basename(url.pathname));
    if (!fs.existsSync(file)) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, hits, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

/** Site B: a page for a frame, and a password field in an open shadow root that echoes what is typed into it. */
const B_PAGES: Record<string, (u: URL) => string> = {
  // A field that has the focus of its frame from the start: keys sent while the frame has the focus land in it, and it reports them.
  '/grab.html': () =>
    '<title>Grab</title><input id="g" aria-label="Grabber"><script>const g = document.getElementById(\'g\'); addEventListener(\'message\', () => g.focus());' +
    ' g.addEventListener(\'input\', () => fetch(\'/grabbed?v=\' + encodeURIComponent(g.value)));</script>',
  '/inner.html': () => '<title>Inner</title><p>Inner frame</p><button type="button" onclick="this.textContent=\'Inner clicked\'">Inner button</button>',
  '/pw.html': () =>
    '<title>Frame login</title><body style="margin:0"><pw-box></pw-box><p id="echo">Nothing typed</p><script>' +
    "customElements.define('pw-box', class extends HTMLElement { constructor() { super(); const root = this.attachShadow({ mode: 'open' });" +
    ' root.innerHTML = \'<input type="password" aria-label="Frame password" style="display:block;width:220px;height:30px">\';' +
    " root.querySelector('input').addEventListener('input', (e) => { document.getElementById('echo').textContent = 'You typed ' + e.target.value + ' here'; }); } });" +
    '</script></body>',
};

let a: Site;
let b: Site;

beforeAll(async () => {
  b = await startSite(B_PAGES);
  a = await startSite({
    // Whatever is typed into Code goes into the button's label, the link's text and address, and the frame's address.
    '/copy.html': () =>
      '<title>Copy</title><h1>Copy</h1><p><label for="code">Code</label> <input id="code" name="code" autocomplete="off"></p>' +
      '<p><button id="go" type="button">Send</button></p><p><a id="link" href="/done.html">Open</a></p>' +
      `<iframe id="frame" src="${b.url}/inner.html" width="400" height="120"></iframe><script>` +
      "const code = document.getElementById('code');" +
      "code.addEventListener('input', () => { document.getElementById('go').textContent = 'Send ' + code.value;" +
      " const link = document.getElementById('link'); link.textContent = 'Open ' + code.value; link.href = '/done.html?c=' + encodeURIComponent(code.value);" +
      ` document.getElementById('frame').src = '${b.url}/inner.html?c=' + encodeURIComponent(code.value); });` +
      '</script>',
    '/done.html': () => '<title>Done</title><p>Opened</p>',
    // At the first key typed into Note, the page moves the focus into a field in a frame of site B.
    '/append.html': () =>
      '<title>Append</title><p><label for="note">Note</label> <input id="note" value="start:"></p>' +
      `<iframe id="grab" src="${b.url}/grab.html" width="300" height="60"></iframe><script>` +
      "document.getElementById('note').addEventListener('keydown', (e) => { if (e.key.length !== 1) return; const f = document.getElementById('grab'); f.focus(); f.contentWindow.postMessage('focus', '*'); });" +
      '</script>',
    // Fields in the top layer: a modal dialog and a popover, red so a picture shows them.
    '/top-layer.html': () =>
      '<title>Top layer</title><body style="margin:0;background:#fff"><h1>Behind</h1>' +
      '<dialog id="d" style="position:fixed;left:20px;top:60px;margin:0;padding:10px;border:0;background:#fff">' +
      '<input id="dp" type="password" aria-label="Dialog password" style="display:block;width:300px;height:60px;border:0;background:#f00;color:#f00;font-size:40px">' +
      '<input id="dk" aria-label="Dialog key" style="display:block;margin-top:10px;width:300px;height:60px;border:0;background:#f00;color:#0f0;font-size:40px"></dialog>' +
      '<div id="p" popover="manual" style="position:fixed;left:400px;top:60px;margin:0;padding:10px;border:0;background:#fff">' +
      '<input id="pp" type="password" aria-label="Popover password" style="display:block;width:200px;height:60px;border:0;background:#f00;color:#f00;font-size:40px"></div>' +
      "<script>document.getElementById('d').showModal(); document.getElementById('p').showPopover();</script></body>",
    '/login.html': () =>
      '<title>Login</title><form action="/got" method="get"><p><label for="f1">First</label> <input id="f1" name="f1"></p>' +
      '<p><label for="f2">Second</label> <input id="f2" name="f2"></p><p><label for="f3">Third</label> <input id="f3" name="f3"></p>' +
      '<p><button type="submit">Log in</button></p></form>',
    '/got': () => '<title>Got</title><p>Received</p>',
    '/frame-login.html': () => `<title>Outer</title><h1>Sign in below</h1><iframe src="${b.url}/pw.html" width="500" height="200"></iframe>`,
  });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const runTask = (key: string, task: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body: { task } });
const recording = (key: string, sessionId: string, taskId: string) => api(base(), 'GET', `/task/${sessionId}/${taskId}/recording`, { key });
async function finished(res: { status: number; body: any }): Promise<any> {
  if (res.status !== 200) throw new Error(`run-task answered ${res.status}: ${JSON.stringify(res.body)}`);
  const { sessionId, taskId } = res.body;
  return waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${sessionId}/${taskId}`);
    return ['task_completed', 'failed', 'stopped'].includes(r.body.status) ? r.body : null;
  }, 60_000);
}

/** Every part of 8 characters of `value` that shows up in `text`, whitespace and case aside, also URL-decoded. */
function partsIn(text: string, value: string): string[] {
  const flat = (s: string) => s.replace(/\s+/g, '').toLowerCase();
  let decoded = text;
  try {
    decoded = decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    /* as it is */
  }
  const hay = `${flat(text)}\n${flat(decoded)}`;
  const v = flat(value);
  const found: string[] = [];
  for (let i = 0; i + 8 <= v.length; i++) if (hay.includes(v.slice(i, i + 8))) found.push(v.slice(i, i + 8));
  return found;
}

/** The record page's HTML as a browser gets it. */
async function recordPageHtml(pageUrl: string): Promise<string> {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    await page.goto(pageUrl);
    return await page.content();
  } finally {
    await browser.close();
  }
}

describe('a recording is masked like everything else', () => {
  it('what the page copies of a secret into a button, a link and a frame address is masked in the recording, its page and its export', async () => {
    const SECRET = 'Copied-Secret-Value-4477abcd';
    const t = token('rec-mask');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Code' }, text: '<secret>code</secret>' } },
        { tool: 'click_element', args: { index: { ref: 'Inner button' } } },
        { tool: 'click_element', args: { index: { ref: 'Send' } } },
        { tool: 'click_element', args: { index: { ref: 'Open' } } },
        { tool: 'done', args: { message: 'opened' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const done = await finished(await runTask(key, { prompt: `${t} send the code`, startingUrl: `${a.url}/copy.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { code: SECRET } }] }));
    expect(done.status).toBe('task_completed');
    // the page did copy the value: the link was opened with it
    expect(a.hits.filter((u) => u.pathname === '/done.html').map((u) => u.searchParams.get('c'))).toContain(SECRET);
    const rec = await recording(key, done.sessionId, done.taskId);
    expect(rec.body.steps.map((s: any) => [s.action, s.outcome])).toEqual([
      ['input_text', 'ok'],
      ['click_element', 'ok'],
      ['click_element', 'ok'],
      ['click_element', 'ok'],
      ['done', 'ok'],
    ]);
    const [, inner, send, open] = rec.body.steps;
    expect(inner.element.frame.url).toContain('<secret>code</secret>');
    expect(send.element.text).toBe('Send <secret>code</secret>');
    expect(open.element.name).toContain('<secret>code</secret>');
    const exported = await fetch(`${base()}/task/${done.sessionId}/${done.taskId}/recording?format=playwright`, { headers: { authorization: `Bearer ${key}` } });
    expect(exported.status).toBe(200);
    const page = await recordPageHtml(rec.body.pageUrl);
    expect(page).toContain('Send &lt;secret&gt;code&lt;/secret&gt;');
    for (const [where, text] of [
      ['recording', JSON.stringify(rec.body)],
      ['export', await exported.text()],
      ['record page', page],
    ]) {
      expect({ where, parts: partsIn(text, SECRET) }).toEqual({ where, parts: [] });
    }
  }, 120_000);
});

describe('typing by hand inside a frame', () => {
  it('what a person types into a password field in a shadow root of a frame is recorded as secret and masked from then on', async () => {
    const typedByHand = 'Pa55-By-Hand-6620-qrst';
    const t = token('hand-frame');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'click_element', args: { index: { ref: 'Frame password' } } },
        { tool: 'request_human_input', args: { value: 'Please type your password' } },
        { tool: 'done', args: { message: 'the frame says: {{find:(You typed [^\\n"]* here)}}' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const session = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body;
    const send = (message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId: session.sessionId, message } });
    const asked = await send({ actionType: 'newTask', newState: 'start', prompt: `${t} sign in`, startingUrl: `${a.url}/frame-login.html` });
    expect(asked.body).toMatchObject({ type: 'guardrail_trigger' });
    const taskId = asked.body.taskId;
    expect((await send({ actionType: 'interaction', action: { type: 'takeOverControl' } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'TYPE', text: typedByHand } })).body.success).toBe(true);
    expect((await send({ actionType: 'interaction', action: { type: 'releaseControl' } })).body.success).toBe(true);
    await send({ actionType: 'guardrail', newState: 'resume', prompt: 'typed' });
    const ended = await waitFor(async () => {
      const r = await api(base(), 'GET', `/task/${session.sessionId}/${taskId}`);
      return r.body.status === 'task_completed' ? r.body : null;
    }, 60_000);
    // the field got it (the frame echoes it), and the agent's answer, copied from the page, holds the placeholder
    expect(ended.data.message).toBe('the frame says: You typed <secret>typed_by_hand</secret> here');
    const rec = (await recording(key, session.sessionId, taskId)).body;
    const typed = rec.steps.find((s: any) => s.action === 'manual_type');
    expect(typed.args).toEqual({ text: null, secret: true });
    const everything = [JSON.stringify(rec), JSON.stringify(ended), JSON.stringify(await recordedRequests(model(), t))].join('\n');
    expect(partsIn(everything, typedByHand)).toEqual([]);
    await send({ actionType: 'state', newState: 'terminate' });
  }, 120_000);
});

/** How many pixels of an image (a data: URL, PNG or JPEG) are clearly red, counted by a browser. */
async function redPixels(browser: Browser, dataUrl: string): Promise<{ red: number; width: number }> {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      let red = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i] > 180 && data[i + 1] < 90 && data[i + 2] < 90) red++;
      return { red, width: canvas.width };
    }, dataUrl);
  } finally {
    await page.close();
  }
}

const launch = () => chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });

describe('pictures hide fields in every layer', () => {
  it('a step picture paints over secret fields in a modal dialog and a popover', async () => {
    const t = token('top-layer');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Dialog key' }, text: '<secret>password</secret>' } },
        { tool: 'input_text', args: { index: { ref: 'Dialog password' }, text: '<secret>password</secret>' } },
        { tool: 'done', args: { message: 'typed' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const done = await finished(await runTask(key, { prompt: `${t} type`, startingUrl: `${a.url}/top-layer.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { password: 'Top-Layer-Secret-31' } }] }));
    expect(done.status).toBe('task_completed');
    const rec = (await recording(key, done.sessionId, done.taskId)).body;
    const token_ = new URL(rec.pageUrl).searchParams.get('token')!;
    const browser = await launch();
    try {
      const counts = [];
      for (const step of rec.steps.slice(0, 2)) {
        expect({ seq: step.seq, action: step.action, picture: step.pictureFileId ? 'taken' : step.pictureSkipped }).toEqual({ seq: step.seq, action: 'input_text', picture: 'taken' });
        const res = await fetch(`${base()}/recordings/${done.sessionId}/${done.taskId}/pictures/${step.seq}?token=${encodeURIComponent(token_)}`);
        expect(res.status).toBe(200);
        counts.push(await redPixels(browser, `data:image/jpeg;base64,${Buffer.from(await res.arrayBuffer()).toString('base64')}`));
      }
      // The fields are 300 x 60 and 200 x 60 CSS pixels (thousands of pixels at any scale): none of them shows
      // (the popover's password field, behind the modal dialog's inert backdrop but above it, too).
      expect(counts.map((c) => c.red)).toEqual([0, 0]);
    } finally {
      await browser.close();
    }
  }, 120_000);

  describe('with LLM_VISION', () => {
    let vision: ServiceProcess;
    beforeAll(async () => {
      const redis = new URL(serviceEnv().REDIS_URL);
      redis.pathname = '/6';
      vision = await startService({ LLM_VISION: 'true', TEMPORAL_TASK_QUEUE: `vision-${Date.now()}`, REDIS_URL: redis.toString() });
    }, 120_000);
    afterAll(async () => {
      await vision?.stop();
    });

    it('the screenshot a vision model gets has the secret fields of the top layer painted over', async () => {
      const t = token('vision');
      await registerScript(model(), {
        match: t,
        steps: [
          { tool: 'input_text', args: { index: { ref: 'Dialog key' }, text: '<secret>password</secret>' } },
          { tool: 'input_text', args: { index: { ref: 'Dialog password' }, text: '<secret>password</secret>' } },
          { tool: 'done', args: { message: 'typed' } },
        ],
      });
      const { apiKey: key } = await createUser();
      const res = await api(vision.baseUrl, 'POST', '/start/run-task', {
        key,
        body: { task: { prompt: `${t} type`, startingUrl: `${a.url}/top-layer.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { password: 'Vision-Secret-Value-58' } }] } },
      });
      expect(res.status).toBe(200);
      await waitFor(async () => ((await api(vision.baseUrl, 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`)).body.status === 'task_completed' ? true : null), 60_000);
      // The screenshot of each request's observation (older ones are left out of the conversation).
      const images = (await recordedRequests(model(), t)).map((r) => {
        const parts = (r.body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
        return parts.filter((part: any) => part.type === 'image_url').map((part: any) => String(part.image_url.url));
      });
      expect(images.map((list) => list.length)).toEqual([1, 1, 1]);
      const browser = await launch();
      try {
        const red = [];
        for (const [url] of images) red.push((await redPixels(browser, url)).red);
        // First the empty "Dialog key" shows (red, nothing in it yet); once a secret is typed into it, no field shows.
        expect(red[0]).toBeGreaterThan(1000);
        expect(red.slice(1)).toEqual([0, 0]);
        expect(images.every((list) => list[0].startsWith('data:image/jpeg;base64,'))).toBe(true);
      } finally {
        await browser.close();
      }
    }, 180_000);
  });
});

describe('a secret match is as strict as it reads', () => {
  const typedInto = (t: string, steps: { field: string; name: string }[]) =>
    registerScript(model(), {
      match: t,
      steps: [
        ...steps.map((s) => ({ tool: 'input_text', args: { index: { ref: s.field }, text: `<secret>${s.name}</secret>` } })),
        { tool: 'click_element', args: { index: { ref: 'Log in' } } },
        { tool: 'done', args: { message: 'sent' } },
      ],
    });
  const told = async (t: string) => (await recordedRequests(model(), t)).map((r) => JSON.stringify(r.body.messages)).join('\n');
  const received = (before: number) => a.hits.slice(before).filter((u) => u.pathname === '/got').map((u) => Object.fromEntries(u.searchParams));

  it('a match that names no port is not typed into a page on another port', async () => {
    const t = token('strict-port');
    await typedInto(t, [{ field: 'First', name: 'anyPort' }]);
    const { apiKey: key } = await createUser();
    const before = a.hits.length;
    const done = await finished(await runTask(key, { prompt: `${t} log in`, startingUrl: `${a.url}/login.html`, secrets: [{ match: '127.0.0.1', fields: { anyPort: 'Value-For-Default-Port' } }] }));
    expect(done.status).toBe('task_completed');
    expect(received(before)).toEqual([{ f1: '', f2: '', f3: '' }]);
    expect(await told(t)).toContain(`The secret \\"anyPort\\" may only be used on 127.0.0.1, and this page is http://127.0.0.1:${a.port}.`);
  }, 120_000);

  it('a scheme and a port the match names are honoured', async () => {
    const t = token('strict-named');
    await typedInto(t, [
      { field: 'Second', name: 'httpsOnly' },
      { field: 'Third', name: 'thisOne' },
    ]);
    const { apiKey: key } = await createUser();
    const secrets = [
      { match: `https://127.0.0.1:${a.port}`, fields: { httpsOnly: 'Value-For-Https-Only' } },
      { match: `http://127.0.0.1:${a.port}`, fields: { thisOne: 'Value-For-This-Page' } },
    ];
    const before = a.hits.length;
    const done = await finished(await runTask(key, { prompt: `${t} log in`, startingUrl: `${a.url}/login.html`, secrets }));
    expect(done.status).toBe('task_completed');
    expect(received(before)).toEqual([{ f1: '', f2: '', f3: 'Value-For-This-Page' }]);
    expect(await told(t)).toContain(`The secret \\"httpsOnly\\" may only be used on https://127.0.0.1:${a.port}, and this page is http://127.0.0.1:${a.port}.`);
  }, 120_000);
});

describe('secret typing that appends', () => {
  it('clear:false types the whole value into the checked field: a page that moves the focus after a key gets none of it', async () => {
    const SECRET = 'Append-Secret-7731-xyzw';
    const t = token('append');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Note' }, text: '<secret>note</secret>', clear: false } },
        { tool: 'done', args: { message: 'appended' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const before = b.hits.length;
    const done = await finished(await runTask(key, { prompt: `${t} append`, startingUrl: `${a.url}/append.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { note: SECRET } }] }));
    expect(done.status).toBe('task_completed');
    const grabbed = b.hits.slice(before).filter((u) => u.pathname === '/grabbed').map((u) => u.searchParams.get('v') ?? '');
    expect(partsIn(grabbed.join('\n'), SECRET)).toEqual([]);
    const told = (await recordedRequests(model(), t)).map((r) => JSON.stringify(r.body.messages)).join('\n');
    expect(told).toContain('Appended ••••');
    expect(told).toMatch(/textbox \\"Note\\" value=\\"(start:)?<secret>note<\/secret>\\"/);
  }, 120_000);
});
