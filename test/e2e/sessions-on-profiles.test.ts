import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { createArchive } from '../../src/profiles/archive';
import { api, waitFor } from '../support/http';
import { registerScript } from '../support/scripted-model';
import { createUser } from '../support/service';

const base = () => process.env.TEST_API_URL!;
const fixtures = () => process.env.TEST_FIXTURES_URL!;
const model = () => process.env.TEST_LLM_BASE_URL!;
const token = (name: string) => `[${name.padEnd(10, '_')}-${Date.now()}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}]`;
const send = (key: string, sessionId: string, message: Record<string, unknown>) => api(base(), 'POST', '/start/send-message', { key, body: { sessionId, message } });

/** The task's end: the inline answer, or by polling when the machine is too busy for the inline wait. */
async function outcome(res: { body: any }): Promise<any> {
  if (res.body.status !== 'pending') return res.body;
  return waitFor(async () => {
    const r = await api(base(), 'GET', `/task/${res.body.sessionId}/${res.body.taskId}`);
    return ['task_completed', 'failed'].includes(r.body.status) ? r.body : null;
  }, 60_000);
}

async function upload(key: string, name: string, content: string): Promise<string> {
  const form = new FormData();
  form.append('files', new Blob([content], { type: 'text/plain' }), name);
  const res = await fetch(`${base()}/files/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  return body.files[0].fileId;
}

/** A real Chromium profile: a persistent context visits a page that sets a cookie and local storage. */
async function buildProfileArchive(url: string): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'profile-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('state')?.textContent?.startsWith('visits=1'));
  await context.close();
  const chunks: Buffer[] = [];
  for await (const c of createArchive(dir)) chunks.push(c as Buffer);
  await fs.rm(dir, { recursive: true, force: true });
  return Buffer.concat(chunks);
}

describe('sessions on an environment, task files and downloads', () => {
  it('runs a session on an uploaded Chromium profile: its cookie and local storage are in the page', async () => {
    const { apiKey: key } = await createUser();
    const env = (await api(base(), 'POST', '/environments', { key, body: { name: 'built profile' } })).body.environment;
    const archive = await buildProfileArchive(`${fixtures()}/state.html`);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(archive)], { type: 'application/gzip' }), 'profile.tar.gz');
    const up = await fetch(`${base()}/environments/${env._id}/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(up.status).toBe(200);
    expect(((await up.json()) as any).environment).toMatchObject({ status: 'ready', blobSize: archive.length });

    const t = token('built');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });
    const started = Date.now();
    const s = await api(base(), 'POST', '/start/start-session', { key, body: { environmentId: env._id } });
    expect(s.status).toBe(200);
    console.log(`session start on a ${(archive.length / 1024 / 1024).toFixed(1)} MB profile: ${Date.now() - started} ms`);
    const r = await send(key, s.body.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} read`, startingUrl: `${fixtures()}/state.html` });
    // the page saw the profile's earlier visit and its cookie
    expect((await outcome(r)).data.message).toBe('visits=2 member=ada');
    await send(key, s.body.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('keeps a login (cookies, local storage) in the environment from one session to the next, one live session at a time', async () => {
    const { apiKey: key } = await createUser();
    const env = (await api(base(), 'POST', '/environments', { key, body: { name: 'shop account' } })).body.environment;
    const t = token('profile');
    await registerScript(model(), { match: t, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });

    const first = await api(base(), 'POST', '/start/start-session', { key, body: { environmentId: env._id } });
    expect(first.status).toBe(200);
    const busy = await api(base(), 'POST', '/start/start-session', { key, body: { environmentId: env._id } });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ success: false, code: 'PROFILE_IN_USE' });
    const r1 = await send(key, first.body.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} visit`, startingUrl: `${fixtures()}/state.html` });
    expect((await outcome(r1)).data.message).toBe('visits=1 member=ada');
    await send(key, first.body.sessionId, { actionType: 'state', newState: 'terminate' });

    const saved = await waitFor(async () => {
      const list = (await api(base(), 'GET', '/environments', { key })).body.environments;
      const e = list.find((x: any) => x._id === env._id);
      return e?.status === 'ready' && e.blobSize > 0 ? e : null;
    }, 30_000);
    expect(saved.blobUploadedAt).toEqual(expect.any(String));

    const second = await waitFor(async () => {
      const r = await api(base(), 'POST', '/start/start-session', { key, body: { environmentId: env._id } });
      return r.status === 200 ? r : null;
    }, 15_000);
    const t2 = token('profile2');
    await registerScript(model(), { match: t2, steps: [{ tool: 'done', args: { message: '{{find:(visits=\\d+ member=\\w+)}}' } }] });
    const r2 = await send(key, second.body.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t2} visit again`, startingUrl: `${fixtures()}/state.html` });
    expect((await outcome(r2)).data.message).toBe('visits=2 member=ada');
    await send(key, second.body.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it('puts an uploaded file into a file input, and refuses unknown fileIds before the task starts', async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const fileId = await upload(key, 'note.txt', 'hello from the user');
    const foreign = await upload(other.apiKey, 'theirs.txt', 'not yours');
    const s = (await api(base(), 'POST', '/start/start-session', { key, body: {} })).body;
    const refused = await send(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: 'upload', files: [foreign] });
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ success: false, code: 'FILE_NOT_FOUND', details: { parameter: 'files', value: [foreign] } });

    const t = token('upload');
    await registerScript(model(), {
      match: t,
      steps: [
        { tool: 'upload_file', args: { index: { ref: 'Document' }, fileIds: ['{{find:- (file_[0-9a-f]+): note.txt}}'] } },
        { tool: 'done', args: { message: '{{find:(chosen note.txt: [^\\n]+)}}' } },
      ],
    });
    const res = await send(key, s.sessionId, { actionType: 'newTask', newState: 'start', prompt: `${t} upload the note`, startingUrl: `${fixtures()}/upload.html`, files: [fileId] });
    expect(await outcome(res)).toMatchObject({ type: 'task_completed', data: { message: 'chosen note.txt: hello from the user' } });
    await send(key, s.sessionId, { actionType: 'state', newState: 'terminate' });
  });

  it("returns the page's downloads in data.files with a link that works for an hour and for no one else without it", async () => {
    const { apiKey: key } = await createUser();
    const other = await createUser();
    const t = token('download');
    await registerScript(model(), { match: t, steps: [{ tool: 'click_element', args: { index: { ref: 'Download report' } } }, { tool: 'wait', args: { seconds: 0.5 } }, { tool: 'done', args: { message: 'downloaded' } }] });
    const res = { body: await outcome(await api(base(), 'POST', '/start/run-task', { key, body: { task: { prompt: `${t} get the report`, startingUrl: `${fixtures()}/download.html` } } })) };
    expect(res.body).toMatchObject({ type: 'task_completed', data: { files: [{ filename: 'report.csv', source: `${fixtures()}/download/report.csv?token=***`, downloadUrl: expect.any(String), timestamp: expect.any(Number) }] } });
    const { downloadUrl } = res.body.data.files[0];
    const got = await fetch(downloadUrl);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toContain('report.csv');
    expect(await got.text()).toBe('month,total\n2026-10,1234.50\n');
    const bare = downloadUrl.replace(/\?token=.*/, '');
    expect((await fetch(bare, { headers: { authorization: `Bearer ${other.apiKey}` } })).status).toBe(404);
    expect((await fetch(bare, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${bare}?token=1.forged`)).status).toBe(404);
  });
});
