/**
 * One-time codes: a secret field that is an authenticator seed. `<secret>otp</secret>` types
 * the code valid at that moment (computed on the worker); the site checks it against the
 * seed; neither the seed nor the code shows up in what the service sends out (model,
 * events, the task's answer and requests, its recording).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser } from '../support/service';
import { totpCode } from '../../src/agent/secrets/totp';

const base = () => process.env.TEST_API_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

const SEED = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
let site: { url: string; codes: string[]; close(): Promise<void> };

beforeAll(async () => {
  const codes: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
    if (url.pathname === '/2fa.html') {
      return html('<title>Two-step check</title><h1>Enter the code of your authenticator app</h1><form action="/2fa-check" method="post"><label>Code <input name="code" autocomplete="one-time-code"></label><button>Verify</button></form>');
    }
    if (url.pathname === '/2fa-check' && req.method === 'POST') {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const code = new URLSearchParams(body).get('code') ?? '';
        codes.push(code);
        // The code of this 30-second window or the one before (typing may cross a boundary).
        const now = Date.now();
        const ok = [now, now - 30_000].some((t) => totpCode({ totp: SEED }, t) === code);
        html(`<title>Checked</title><h1>${ok ? 'Code accepted' : 'Code rejected'}</h1><p>You entered ${code}.</p>`);
      });
      return;
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  site = { url: `http://127.0.0.1:${port}`, codes, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
});
afterAll(() => site.close());

describe('one-time codes', () => {
  it('types the code valid at that moment for a TOTP seed field, checked by the site, and masks seed and code everywhere', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    const t = token('totp');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Code' }, text: '<secret>otp</secret>' }, text: 'Typing the one-time code.' },
        { tool: 'click_element', args: { index: { ref: 'Verify' } } },
        { tool: 'done', args: { message: 'The site says: {{find:(Code (?:accepted|rejected))}}. {{find:(You entered [^.\\n]+)}}' } },
      ],
    });
    const res = await api(base(), 'POST', '/start/run-task', {
      key,
      body: { task: { prompt: `${t} sign in with the one-time code`, startingUrl: `${site.url}/2fa.html`, secrets: [{ match: new URL(site.url).host, fields: { otp: { totp: SEED, digits: 6, period: 30 } } }] } },
    });
    expect(res.status).toBe(200);
    // The page shows the code back: the model saw it, and the answer has it, masked.
    expect(res.body).toMatchObject({ status: 'task_completed', data: { message: 'The site says: Code accepted. You entered <secret>otp</secret>' } });
    expect(site.codes).toHaveLength(1);
    const [code] = site.codes;
    expect(code).toMatch(/^\d{6}$/);

    // What left the worker: the model's requests, the events, the answer, the recording.
    const toModel = (await recordedRequests(model(), t)).map(requestText).join('\n');
    expect(toModel).toContain('<secret>otp</secret>');
    expect(toModel).toContain('one-time code');
    const events = await api(base(), 'GET', `/start/sessions/${res.body.sessionId}/events?limit=500`, { key });
    const recording = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}/recording`, { key });
    expect(recording.status).toBe(200);
    for (const [where, text] of [
      ['model', toModel],
      ['events', JSON.stringify(events.body)],
      ['answer', JSON.stringify(res.body)],
      ['recording', JSON.stringify(recording.body)],
    ] as const) {
      expect([where, text.includes(SEED), new RegExp(`(^|\\D)${code}(\\D|$)`).test(text)]).toEqual([where, false, false]);
    }
    expect(JSON.stringify(recording.body)).toContain('<secret>otp</secret>');
  });

  it('refuses a seed that is not base32, or out-of-range digits and period, without echoing it', async () => {
    const { apiKey: key } = await createUser({ balance: 10 });
    for (const otp of [{ totp: 'not-a-base32-seed-at-all!' }, { totp: SEED, digits: 5 }, { totp: SEED, period: 5 }, { totp: SEED, extra: 1 }]) {
      const res = await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: 'p', secrets: [{ match: 'all', fields: { otp } }] } } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: 'INVALID_PARAMETER' });
      expect(JSON.stringify(res.body)).not.toContain(SEED);
      expect(JSON.stringify(res.body)).not.toContain('not-a-base32');
    }
  });
});
