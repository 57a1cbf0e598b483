import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/**
 * The eval sites (eval/sites/<site>/), served on loopback, recording what each page
 * receives. Every run of a task gets its own address space, `/<runId>/<site>/<file>`, so
 * what one run sent never counts for another. Recorded: every page asked for (with its query),
 * every form post (fields and uploaded files) and every report a page's script makes by
 * POSTing JSON to the relative address `__record`. A form post to a page is answered by that
 * page with the posted fields in `window.__posted`.
 */
export const SITES_DIR = path.join(__dirname, 'sites');

/** The account of the login site (given to the agent as the task's secrets). */
export const LOGIN = { username: 'ada.l', password: 'Analytical#1843' } as const;
/** The account of the bank site (test split). */
export const BANK_LOGIN = { customer: '40517732', pin: '6093' } as const;
/** The account of the gym site (dev split), given in the task's prompt. */
export const GYM_LOGIN = { email: 'sam.kerr@example.com', password: 'Peach-Tree-77' } as const;
/** The card of the library site (dev split), given as the task's secrets. */
export const LENDING_LOGIN = { card: '2900417345', pin: '8826' } as const;

/**
 * Sites with a page that needs a sign-in: posting these fields to it signs in; without it, its
 * form (`form`, index.html unless named) is shown again.
 */
const SIGN_INS: Record<string, { page: string; fields: Readonly<Record<string, string>>; form?: string }> = {
  'm-login': { page: 'account.html', fields: LOGIN },
  'tm-bank': { page: 'accounts.html', fields: BANK_LOGIN },
  'd-gym': { page: 'member.html', fields: GYM_LOGIN, form: 'login.html' },
  'd-lending': { page: 'loans.html', fields: LENDING_LOGIN, form: 'signin.html' },
};

export interface SiteFile {
  field: string;
  filename: string;
  content: string;
}

export interface SiteRecord {
  site: string;
  method: string;
  /** The file asked for, relative to the site (e.g. "thanks.html", "__record"). */
  path: string;
  query: Record<string, string>;
  /** Form fields (a form post) or the JSON a page reported. */
  fields: Record<string, unknown>;
  files: SiteFile[];
  /** The request carried the session cookie of a successful sign-in (the sites of SIGN_INS). */
  signedIn: boolean;
  at: number;
}

export interface SiteServer {
  url: string;
  port: number;
  /** The address of a site's page for one run. */
  pageUrl(runId: string, site: string, file?: string): string;
  records(runId: string): SiteRecord[];
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.txt': 'text/plain' };
const RUN_ID = /^[a-z0-9][a-z0-9-]{0,80}$/;
const MAX_BODY = 2_000_000;

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseMultipart(req: http.IncomingMessage): Promise<{ fields: Record<string, string>; files: SiteFile[] }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: SiteFile[] = [];
    const bb = busboy({ headers: req.headers, limits: { fileSize: MAX_BODY } });
    bb.on('field', (name, value) => (fields[name] = value));
    bb.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // a file input left empty is sent as a part with no file name and no content
        if (info.filename) files.push({ field, filename: info.filename, content: Buffer.concat(chunks).toString('utf8') });
      });
    });
    bb.on('close', () => resolve({ fields, files }));
    bb.on('error', reject);
    req.pipe(bb);
  });
}

async function parseBody(req: http.IncomingMessage): Promise<{ fields: Record<string, unknown>; files: SiteFile[] }> {
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) return parseMultipart(req);
  const raw = (await readBody(req)).toString('utf8');
  if (type.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      return { fields: parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : { value: parsed }, files: [] };
    } catch {
      return { fields: { raw }, files: [] };
    }
  }
  return { fields: Object.fromEntries(new URLSearchParams(raw)), files: [] };
}

const cookie = (req: http.IncomingMessage, name: string): string | undefined =>
  (req.headers.cookie ?? '')
    .split(';')
    .map((c) => c.trim().split('='))
    .find(([k]) => k === name)?.[1];

/** Starts the sites server on `port` (0: any free port) on 127.0.0.1. */
export async function startSiteServer(opts: { port?: number } = {}): Promise<SiteServer> {
  const byRun = new Map<string, SiteRecord[]>();

  const serveFile = (res: http.ServerResponse, file: string, posted?: Record<string, unknown>, headers: Record<string, string> = {}) => {
    let body: Buffer | string = fs.readFileSync(file);
    if (posted && file.endsWith('.html')) {
      const json = JSON.stringify(posted).replace(/</g, '\\u003c');
      body = body.toString('utf8').replace('<head>', `<head><script>window.__posted = ${json};</script>`);
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...headers }).end(body);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, runId, site, ...rest] = url.pathname.split('/');
    const rel = rest.join('/') || 'index.html';
    if (!runId || !RUN_ID.test(runId) || !site || !/^[a-z0-9-]+$/.test(site) || !fs.existsSync(path.join(SITES_DIR, site))) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const siteDir = path.join(SITES_DIR, site);
    const file = path.join(siteDir, path.normalize(`/${rel}`));
    if (!file.startsWith(siteDir + path.sep)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const method = req.method ?? 'GET';
    const { fields, files } = method === 'POST' ? await parseBody(req) : { fields: {}, files: [] };
    const sessionCookie = `sid_${runId}`;
    const signedIn = cookie(req, sessionCookie) === 'ok';
    const isPage = file.endsWith('.html');
    if (method === 'POST' || isPage || rel === '__record') {
      const record: SiteRecord = { site, method, path: rel, query: Object.fromEntries(url.searchParams), fields, files, signedIn, at: Date.now() };
      const list = byRun.get(runId) ?? [];
      list.push(record);
      byRun.set(runId, list);
    }
    if (rel === '__record') {
      res.writeHead(204).end();
      return;
    }

    const signIn = SIGN_INS[site];
    if (signIn && rel === signIn.page) {
      if (method === 'POST') {
        if (Object.entries(signIn.fields).every(([k, v]) => fields[k] === v)) {
          serveFile(res, file, undefined, { 'set-cookie': `${sessionCookie}=ok; Path=/${runId}/; HttpOnly` });
        } else {
          res.writeHead(303, { location: `${signIn.form ?? 'index.html'}?error=1` }).end();
        }
        return;
      }
      if (!signedIn) {
        res.writeHead(303, { location: signIn.form ?? 'index.html' }).end();
        return;
      }
    }

    if (!fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const posted = method === 'POST' ? { ...fields, ...(files.length ? { __files: files.map((f) => f.filename).join(', ') } : {}) } : undefined;
    serveFile(res, file, posted);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    pageUrl: (runId, site, file = 'index.html') => `${url}/${runId}/${site}/${file}`,
    records: (runId) => [...(byRun.get(runId) ?? [])],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
