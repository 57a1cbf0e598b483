/**
 * Secrets end to end, on a service of this file's own (its own task queue and worker
 * registry, so every log line of the sessions is in its output): the login page gets the
 * real values, while the model, the events and timeline, the result, the network list, the
 * webhook, the logs, MongoDB and the Temporal history read without the codec key hold only
 * placeholders.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { MongoClient, type Db } from 'mongodb';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionCodec } from '../../src/temporal/codec';
import { unseal } from '../../src/store/sealing';
import { api, waitFor } from '../support/http';
import { allowedPort } from '../support/ports';
import { recordedRequests, registerScript, requestText } from '../support/scripted-model';
import { createUser, ROOT, serviceEnv, startService, type ServiceProcess } from '../support/service';
import { startReceiver } from '../support/webhook-receiver';

const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;

const EMAIL = 'Ada.Lovelace@Analytical.example';
const PASSWORD = 'Tr0ub4dor&3 horse!';
const API_KEY = 'sk-live-NEVER-TYPED-1234567890abcdef';
const VALUES = [EMAIL, PASSWORD, API_KEY];
/** How a value may be written where it leaks: as is, any case, URL- or form-encoded. */
const leaks = (text: string): string[] =>
  VALUES.filter((v) => {
    const lower = text.toLowerCase();
    return [v, encodeURIComponent(v), new URLSearchParams({ v }).toString().slice(2)].some((form) => lower.includes(form.toLowerCase()));
  });

/** A login site on a port the service may reach: the fixture pages, and what it was sent. */
async function startLoginSite() {
  const received: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/signed-in.html') received.push(url.searchParams);
    const file = path.join(ROOT, 'test/fixtures', path.basename(url.pathname));
    if (!fs.existsSync(file)) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(allowedPort(), '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

let service: ServiceProcess;
let site: Awaited<ReturnType<typeof startLoginSite>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let mongo: MongoClient;
let db: Db;
let connection: Connection;

beforeAll(async () => {
  const redis = new URL(serviceEnv().REDIS_URL);
  redis.pathname = '/19';
  service = await startService({ LOG_LEVEL: 'debug', TEMPORAL_TASK_QUEUE: `secrets-${Date.now()}`, REDIS_URL: redis.toString(), INLINE_WAIT_MS: '40000' });
  site = await startLoginSite();
  receiver = await startReceiver();
  mongo = await MongoClient.connect(serviceEnv().MONGODB_URL);
  db = mongo.db();
  connection = await Connection.connect({ address: serviceEnv().TEMPORAL_ADDRESS });
});
afterAll(async () => {
  await service?.stop();
  await site?.close();
  await receiver?.close();
  await mongo?.close();
  await connection?.close();
});

/** A workflow's history as someone without the payload key reads it: raw bytes. */
async function rawHistory(workflowId: string): Promise<{ bytes: Buffer; history: temporal.api.history.v1.IHistory }> {
  const client = new Client({ connection, namespace: 'browser-agent' });
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return { bytes: Buffer.from(temporal.api.history.v1.History.encode(history).finish()), history };
}

describe('secrets', () => {
  it('types the real values into the login page and nowhere else shows them', async () => {
    const { apiKey: key } = await createUser();
    const t = token('secret-login');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Email' }, text: '<secret>email</secret>' } },
        { tool: 'input_text', args: { index: { ref: 'Password' }, text: '<secret>password</secret>' } },
        { tool: 'click_element', args: { index: { ref: 'Sign in' } } },
        { tool: 'extract', args: { query: 'password' } },
        { tool: 'done', args: { message: '{{find:(Signed in as [^\\n]+)}} / {{find:(Your password is [^\\n]+)}}' } },
      ],
    });
    // a session that stays open after its task: its saved page and storage are checked too
    const started = await api(service.baseUrl, 'POST', '/start/start-session', {
      key,
      body: {
        task: {
          prompt: `${t} Sign in`,
          startingUrl: `${site.url}/signin.html`,
          secrets: [
            { match: new URL(site.url).host, fields: { email: EMAIL, password: PASSWORD } },
            { match: '*.example.com', fields: { apiKey: API_KEY } },
          ],
          webhook: { name: 'full', url: receiver.url('/secrets-full'), submittedData: 'full_response' },
        },
      },
    });
    expect(started.status).toBe(200);
    const { sessionId, taskId } = started.body;
    const polled = await waitFor(async () => {
      const r = await api(service.baseUrl, 'GET', `/task/${sessionId}/${taskId}`);
      return r.body.status === 'task_completed' ? r : null;
    }, 40_000);
    const res = { body: polled.body, text: polled.text };

    // the site got the real values
    expect(site.received).toHaveLength(1);
    expect(site.received[0].get('user')).toBe(EMAIL);
    expect(site.received[0].get('phrase')).toBe(PASSWORD);

    // the echoed values come back as placeholders: in the result and in the network list
    expect(res.body.data.message).toBe('Signed in as <secret>email</secret> / Your password is <secret>password</secret> and your token is (none)');
    const signedIn = res.body.data.network[0].urls.find((u: any) => u.url.includes('/signed-in.html'));
    expect(signedIn.url).toBe(`${site.url}/signed-in.html?user=<secret>email</secret>&phrase=<secret>password</secret>&token_field=`);
    expect(leaks(res.text)).toEqual([]);

    // the model saw names, where they work, and placeholders; never a value
    const requests = await recordedRequests(model(), t);
    expect(requests.length).toBe(5);
    const sent = requests.map(requestText).join('\n');
    expect(sent).toContain('- <secret>email</secret> on 127.0.0.1');
    expect(sent).toContain('- <secret>apiKey</secret> on *.example.com');
    expect(sent).toContain('Your password is <secret>password</secret>');
    expect(leaks(JSON.stringify(requests))).toEqual([]);

    // the webhook
    const [hook] = await waitFor(async () => (receiver.at('/secrets-full').length ? receiver.at('/secrets-full') : null), 30_000);
    expect(hook.json.data.message).toContain('<secret>email</secret>');
    expect(leaks(hook.body)).toEqual([]);

    // events and timeline, the saved page and storage of the live session, and everything else MongoDB holds
    // (sealed under the payload key: opened here with it)
    const payloadKey = Buffer.from(fs.readFileSync(path.join(serviceEnv().DATA_DIR, 'payload.key'), 'utf8').trim(), 'hex');
    const snapshot = await waitFor(async () => {
      const snap = await db.collection<any>('browserSnapshots').findOne({ _id: sessionId });
      const opened = snap?.sealed ? unseal<{ url: string; storageState: string }>(payloadKey, snap.sealed) : null;
      return opened?.url.includes('signed-in.html') ? opened : null;
    }, 15_000);
    expect(snapshot.url).toBe(`${site.url}/signed-in.html?user=<secret>email</secret>&phrase=<secret>password</secret>&token_field=`);
    const events = await db.collection('events').find({ sessionId }).toArray();
    expect(events.some((e: any) => e.payload?.type === 'action' && e.payload.data?.name === 'input_text')).toBe(true);
    for (const name of (await db.listCollections().toArray()).map((c) => c.name)) {
      if (name.startsWith('blobs.')) continue;
      const docs = await db.collection(name).find({}).toArray();
      expect({ collection: name, leaks: leaks(JSON.stringify(docs)) }).toEqual({ collection: name, leaks: [] });
    }

    await api(service.baseUrl, 'POST', '/start/send-message', { key, body: { sessionId, message: { actionType: 'state', newState: 'terminate' } } });
    await waitFor(async () => (await db.collection<any>('sessions').findOne({ _id: sessionId }))?.status === 'terminated', 20_000);

    // the Temporal history of the session and of its webhook delivery, read without the key
    await waitFor(async () => (await rawHistory(`webhook-dlv_${taskId}`)).history.events?.some((e) => e.workflowExecutionCompletedEventAttributes), 30_000);
    for (const id of [`session-${sessionId}`, `webhook-dlv_${taskId}`]) {
      const { bytes } = await rawHistory(id);
      for (const v of VALUES) expect({ id, found: bytes.includes(Buffer.from(v)) || bytes.includes(Buffer.from(JSON.stringify(v).slice(1, -1))) }).toEqual({ id, found: false });
    }
    // ... where the values are, encrypted: the session's input holds them
    const { history } = await rawHistory(`session-${sessionId}`);
    const startedEvent = history.events![0].workflowExecutionStartedEventAttributes!;
    const key32 = Buffer.from(fs.readFileSync(path.join(serviceEnv().DATA_DIR, 'payload.key'), 'utf8').trim(), 'hex');
    const [input] = await new EncryptionCodec(key32).decode(startedEvent.input!.payloads! as never);
    expect(defaultPayloadConverter.fromPayload<any>(input).initialTask.params.secrets[0].fields).toEqual({ email: EMAIL, password: PASSWORD });

    // the logs of the service that ran it all (debug level)
    await new Promise((r) => setTimeout(r, 500));
    expect(service.output()).toContain(sessionId);
    expect(leaks(service.output())).toEqual([]);
  });

  it('types nothing on a page the secret does not match, and tells the model', async () => {
    const { apiKey: key } = await createUser();
    const t = token('secret-elsewhere');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'input_text', args: { index: { ref: 'Access token' }, text: '<secret>apiKey</secret>' } },
        { tool: 'click_element', args: { index: { ref: 'Sign in' } } },
        { tool: 'done', args: { message: '{{find:(your token is [^\\n]+)}}' } },
      ],
    });
    const before = site.received.length;
    const res = await api(service.baseUrl, 'POST', '/start/run-task', {
      key,
      body: { task: { prompt: `${t} Sign in`, startingUrl: `${site.url}/signin.html`, secrets: [{ match: '*.example.com', fields: { apiKey: API_KEY } }] } },
    });
    expect(res.body).toMatchObject({ success: true, type: 'task_completed', data: { message: 'your token is (none)' } });
    expect(site.received.slice(before).map((q) => q.get('token_field'))).toEqual(['']);
    const sent = (await recordedRequests(model(), t)).map(requestText).join('\n');
    expect(sent).toContain('Action failed: The secret "apiKey" may only be used on *.example.com, and this page is 127.0.0.1. Nothing was typed.');
    expect(leaks(sent)).toEqual([]);
    expect(leaks(service.output())).toEqual([]);
  });

  it('refuses malformed secrets with a clear 400 that never repeats a value', async () => {
    const { apiKey: key } = await createUser();
    const send = (secrets: unknown) => api(service.baseUrl, 'POST', '/start/run-task', { key, body: { task: { prompt: 'x', secrets } } });
    const badMatch = await send([{ match: 'https://example.com/login', fields: { password: 'x' } }]);
    expect(badMatch.status).toBe(400);
    expect(badMatch.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0.match' } });
    expect(badMatch.body.message).toContain('no path or spaces');
    const badName = await send([{ match: 'all', fields: { 'my password': 'x' } }]);
    expect(badName.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0.fields.my password' } });
    const tooLong = await send([{ match: 'all', fields: { password: `${PASSWORD}${'x'.repeat(5000)}` } }]);
    expect(tooLong.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0.fields.password', value: '[redacted]' } });
    expect(leaks(tooLong.text)).toEqual([]);
    const noFields = await send([{ match: 'all', fields: {} }]);
    expect(noFields.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0.fields' } });
    const missing = await send([{ fields: { a: 'b' } }]);
    expect(missing.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'task.secrets.0.match' } });
  });

  it('refuses a secrets entry with an unknown key, too many fields or too many entries without echoing a value', async () => {
    const { apiKey: key } = await createUser();
    const send = (secrets: unknown) => api(service.baseUrl, 'POST', '/start/run-task', { key, body: { task: { prompt: 'x', secrets } } });
    const unknownKey = await send([{ match: 'all', fields: { password: PASSWORD }, note: API_KEY }]);
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0', value: { match: 'all', fields: { password: '[redacted]' }, note: '[redacted]' } } });
    const fields = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, i === 7 ? EMAIL : `${PASSWORD}-${i}`]));
    const tooManyFields = await send([{ match: 'all', fields }]);
    expect(tooManyFields.status).toBe(400);
    expect(tooManyFields.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets.0.fields', value: { f0: '[redacted]', f7: '[redacted]' } } });
    const entries = Array.from({ length: 51 }, () => ({ match: 'bank.example', fields: { password: PASSWORD, apiKey: API_KEY } }));
    const tooManyEntries = await send(entries);
    expect(tooManyEntries.status).toBe(400);
    expect(tooManyEntries.body).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.secrets' } });
    const seed = await send([{ match: 'all', fields: { otp: { totp: PASSWORD, digits: 6, period: 30, extra: EMAIL } } }]);
    expect(seed.status).toBe(400);
    for (const res of [unknownKey, tooManyFields, tooManyEntries, seed]) expect(leaks(res.text)).toEqual([]);
  });
});
