/**
 * Secrets, policies and the network guard around the main page: in frames of other sites,
 * in shortened or re-spaced forms of a value, in navigations between steps and tasks, in
 * what a page embeds and in what a refusal says. Two sites of the test's own on two
 * loopback ports (both reachable through the network guard), a third port nobody may reach,
 * and the scripted model.
 */
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser, ROOT } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

interface Site {
  url: string;
  port: number;
  /** Every request's path and query, in order. */
  hits: URL[];
  close(): Promise<void>;
}

/** A site on an allowed port: the fixture pages, and pages given per path. */
async function startSite(pages: Record<string, (u: URL) => string> = {}): Promise<Site> {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url);
    if (url.pathname === '/redirect') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
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

let a: Site;
let b: Site;
/** A local listener that is NOT allowlisted: it counts every connection. */
let hidden: net.Server;
let hp: number;
let connections = 0;

beforeAll(async () => {
  b = await startSite({
    '/note.html': () => '<title>B note</title><h1>Page of site B</h1><p>B was reached.</p>',
  });
  a = await startSite({
    '/embed-login.html': () => `<title>Outer page</title><h1>Site A embeds a login form of site B</h1><iframe src="${b.url}/signin.html" width="600" height="320"></iframe>`,
    '/keys.html': () =>
      '<title>Keys</title><h1>Developer settings</h1><form action="saved.html"><p><label for="k">API key</label> <input id="k" name="k"></p>' +
      '<p><label for="m">Memo</label> <input id="m" name="m"></p></form>',
    '/collect': () => '<title>Collected</title><p>thanks</p>',
    '/leaves.html': () => `<title>Leaves soon</title><h1>This page leaves by itself</h1><script>setTimeout(() => { location.href = '${b.url}/note.html'; }, 800);</script>`,
    '/embeds-blocked.html': () =>
      `<title>Allowed page</title><h1>Allowed page</h1><p id="s">loading</p><img src="http://127.0.0.1:${hp}/pixel.png"><script src="http://127.0.0.1:${hp}/script.js"></script>` +
      `<script>fetch('http://127.0.0.1:${hp}/api').then(() => (document.getElementById('s').textContent = 'fetch loaded'), () => (document.getElementById('s').textContent = 'fetch refused'));</script>`,
  });
  hidden = net.createServer((socket) => {
    connections++;
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno');
  });
  await new Promise<void>((r) => hidden.listen(0, '127.0.0.1', r));
  hp = (hidden.address() as AddressInfo).port;
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await new Promise<void>((r) => hidden.close(() => r()));
});

const runTask = (key: string, body: Record<string, unknown>) => api(base(), 'POST', '/start/run-task', { key, body });
async function finished(res: { body: any }): Promise<any> {
  if (res.body.status === 'failed' || res.body.type === 'task_completed') return res.body;
  return waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
    return r.body.status === 'task_completed' || r.body.status === 'failed' ? r.body : null;
  }, 60_000);
}
/** The tool results the model was sent, one per call, in order. */
const toolResults = async (t: string): Promise<string[]> => {
  const byCall = new Map<string, string>();
  for (const r of await recordedRequests(model(), t)) for (const m of r.body.messages ?? []) if (m.role === 'tool') byCall.set(m.tool_call_id, String(m.content));
  return [...byCall.values()];
};
const toolMessages = async (t: string): Promise<string[]> => [...new Set(await toolResults(t))];
const sent = async (t: string) => (await recordedRequests(model(), t)).map(requestText).join('\n');

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

describe('secrets in frames', () => {
  it("never types a secret into another site's frame on a page the secret matches", async () => {
    const t = token('sec-frame');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
        { tool: 'click_element', args: { index: { ref: 'Sign in' } } },
        { tool: 'done', args: { message: 'tried' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const before = b.hits.length;
    const res = await finished(
      await runTask(key, { task: { prompt: `${t} sign in`, startingUrl: `${a.url}/embed-login.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { password: 'Frame-Secret-Value-9f8e7d' } }] } }),
    );
    expect(res).toMatchObject({ type: 'task_completed' });
    // site B got no value: its form was sent empty, or not at all
    const phrases = b.hits.slice(before).filter((u) => u.pathname === '/signed-in.html').map((u) => u.searchParams.get('phrase'));
    expect(phrases.every((p) => p === '')).toBe(true);
    expect(await toolMessages(t)).toContain(
      `Action failed: The secret "password" may only be used on 127.0.0.1:${a.port}, and this field is on 127.0.0.1:${b.port} (a frame inside 127.0.0.1:${a.port}). Nothing was typed.`,
    );
  });
});

describe('parts of secrets', () => {
  const KEY = 'sk-live-0123456789abcdefghij-KLMNOPQRSTUVWXYZ-klmnopqrstuvwxyz-9876543';
  const PHRASE = 'correct  horse  battery  staple  amber  lantern';

  it('the model, events, result and the sites it is sent to never get a part of a long or re-spaced value', async () => {
    expect(KEY.length).toBe(70);
    const t = token('sec-parts');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'API key' }, text: '<secret>apiKey</secret>' } },
        { tool: 'input_text', args: { index: { ref: 'Memo' }, text: '<secret>phrase</secret>' } },
        // the model copies what it sees of the fields into an address and its answer
        { tool: 'navigate', args: { url: `${a.url}/collect?k={{find:"API key" value="([^"]*)"}}&m={{find:"Memo" value="([^"]*)"}}` } },
        { text: 'The key field shows {{find:"API key" value="([^"]*)"}}', tool: 'done', args: { message: 'key {{find:k=([^&\\s]*)}} memo {{find:m=([^&\\s]*)}}' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const res = await finished(
      await runTask(key, { task: { prompt: `${t} fill in the keys`, startingUrl: `${a.url}/keys.html`, secrets: [{ match: `127.0.0.1:${a.port}`, fields: { apiKey: KEY, phrase: PHRASE } }] } }),
    );
    expect(res).toMatchObject({ type: 'task_completed' });
    const seen = await sent(t);
    // the fields show their placeholders
    expect(seen).toMatch(/textbox "API key" value="<secret>apiKey<\/secret>"/);
    expect(seen).toMatch(/textbox "Memo" value="<secret>phrase<\/secret>"/);
    const collected = a.hits.filter((u) => u.pathname === '/collect').map((u) => u.search);
    const events = await api(base(), 'GET', `/task/${res.sessionId}/${res.taskId}`);
    for (const [where, text] of [
      ['model', JSON.stringify(await recordedRequests(model(), t))],
      ['result', JSON.stringify(res)],
      ['task', JSON.stringify(events.body)],
      ['site', collected.join('\n')],
    ]) {
      expect({ where, key: partsIn(text, KEY), phrase: partsIn(text, PHRASE) }).toEqual({ where, key: [], phrase: [] });
    }
  });
});

describe('policy domain rules', () => {
  const policy = async (key: string, body: Record<string, unknown>) => (await api(base(), 'POST', '/policies', { key, body: { name: 'only A', ...body } })).body.policy;

  it("an allowed page's frame of a domain the policy does not allow is never loaded, and nothing is typed into it", async () => {
    const t = token('pol-frame');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: 'typed-into-B@example.test' } },
        { tool: 'done', args: { message: 'done' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const p = await policy(key, { domainRules: { mode: 'allowlist', domains: [`127.0.0.1:${a.port}`] } });
    const before = b.hits.length;
    const res = await finished(await runTask(key, { policyId: p._id, task: { prompt: `${t} type`, startingUrl: `${a.url}/embed-login.html` } }));
    expect(res).toMatchObject({ type: 'task_completed' });
    expect(b.hits.slice(before).map((u) => u.pathname)).toEqual([]);
    const tools = await toolMessages(t);
    expect(tools.some((m) => m.startsWith('Typed'))).toBe(false);
  });

  it('a page that takes the session to a domain the policy does not allow between two tasks is stopped there', async () => {
    const t1 = token('pol-leave1');
    const t2 = token('pol-leave2');
    await registerScript(model(), { match: t1, steps: [{ tool: 'done', args: { message: 'first done' } }] });
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: 'now on {{find:URL: (\\S+)}} seeing {{find:(B was reached|This page leaves by itself)}}' } }] });
    const { apiKey: key } = await createUser();
    const p = await policy(key, { domainRules: { mode: 'allowlist', domains: [`127.0.0.1:${a.port}`] } });
    const before = b.hits.length;
    const started = await api(base(), 'POST', '/start/start-session', { key, body: { policyId: p._id, task: { prompt: `${t1} open`, startingUrl: `${a.url}/leaves.html` } } });
    expect(started.status).toBe(200);
    await finished(started);
    // the page's timer fires while no task runs
    await new Promise((r) => setTimeout(r, 2500));
    const next = await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'newTask', newState: 'start', prompt: `${t2} where are you` } } });
    const res = await finished(next);
    // (the tab is back on the page that tried to leave, or on Chromium's error page of the refused navigation)
    expect(res.data.message).not.toContain(b.url);
    expect(res.data.message).not.toContain('B was reached');
    expect(b.hits.slice(before).map((u) => u.pathname)).toEqual([]);
    await api(base(), 'POST', '/start/send-message', { key, body: { sessionId: started.body.sessionId, message: { actionType: 'state', newState: 'terminate' } } });
  });

  it('sensitive-data rules read the addresses the agent opens and the keys it presses', async () => {
    const t = token('pol-card');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'navigate', args: { url: `${a.url}/collect?c=4111111111111111` } },
        { tool: 'send_keys', args: { keys: '4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1' } },
        { tool: 'done', args: { message: 'done' } },
      ],
    });
    const { apiKey: key } = await createUser();
    const p = await policy(key, { rules: [{ effect: 'block', sensitiveData: ['card_number'] }] });
    const res = await finished(await runTask(key, { policyId: p._id, task: { prompt: `${t} pay`, startingUrl: `${a.url}/keys.html` } }));
    expect(res).toMatchObject({ type: 'task_completed' });
    expect(a.hits.filter((u) => u.pathname === '/collect' && u.searchParams.get('c'))).toEqual([]);
    const tools = await toolResults(t);
    expect(tools.filter((m) => m.startsWith('Not performed: the automation policy blocks this action') && m.includes('a card number'))).toHaveLength(2);
  });
});

describe('the network guard around an allowed page', () => {
  it("refuses an allowed page's sub-resources on a port that is not allowed, and the task goes on", async () => {
    const t = token('net-embed');
    await registerScript(model(), { match: t, steps: [{ tool: 'wait', args: { seconds: 1 } }, { tool: 'done', args: { message: '{{find:(Allowed page)}} {{find:(fetch \\w+)}}' } }] });
    const { apiKey: key } = await createUser();
    const res = await finished(await runTask(key, { task: { prompt: `${t} look`, startingUrl: `${a.url}/embeds-blocked.html` } }));
    expect(res).toMatchObject({ type: 'task_completed', data: { message: 'Allowed page fetch refused' } });
    expect(connections).toBe(0);
  });

  it('a redirect into the private network fails with the refused address in details.url', async () => {
    const t = token('net-redir');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: 'should not get here' } }] });
    const { apiKey: key } = await createUser();
    const res = await finished(await runTask(key, { task: { prompt: `${t} go`, startingUrl: `${a.url}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${hp}/after?x=1`)}` } }));
    expect(res).toMatchObject({ status: 'failed', code: 'NAVIGATION_BLOCKED', details: { url: `http://127.0.0.1:${hp}/after` } });
    expect(connections).toBe(0);
  });

  it('says the same of an internal name, a private address and a name that does not exist', async () => {
    const t = token('net-same');
    const targets = [`http://localhost:${hp}/`, `http://127.0.0.1:${hp}/`, 'http://no-such-name.invalid/', 'http://redis/', 'http://temporal:7233/'];
    await registerScript(model(), {
      match: t,
      steps: [...targets.flatMap((url) => [{ tool: 'navigate', args: { url } }, { tool: 'navigate', args: { url: `${a.url}/keys.html` } }]), { tool: 'done', args: { message: 'done' } }],
    });
    const { apiKey: key } = await createUser();
    const res = await finished(await runTask(key, { task: { prompt: `${t} look`, startingUrl: `${a.url}/keys.html` } }));
    expect(res).toMatchObject({ type: 'task_completed' });
    const tools = (await toolMessages(t)).filter((m) => !m.startsWith('Navigated to'));
    expect(tools).toEqual(['Action failed: the address could not be reached or is not allowed']);
    const seen = await sent(t);
    expect(seen).not.toMatch(/private|loopback|resolve|ENOTFOUND|Cannot reach/i);
    // a startingUrl: the same failure whatever the reason
    for (const url of [`http://localhost:${hp}/x`, 'http://no-such-name.invalid/x']) {
      const failed = await finished(await runTask(key, { task: { prompt: `${t} start`, startingUrl: url } }));
      expect(failed).toMatchObject({ status: 'failed', code: 'NAVIGATION_BLOCKED', error: 'the address could not be reached or is not allowed', details: { url } });
    }
    expect(connections).toBe(0);
  });
});
