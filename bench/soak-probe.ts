/**
 * The soak bench's reading of the stack from /proc, on a thread of its own (reading the memory
 * maps of some twenty Chromium processes takes a while): resident memory of the service, of
 * Temporal, FerretDB and Redis (each with its children), the proportional set size of the
 * Chromium below the service, and how many Chromium processes and renderers there are.
 */
import fs from 'node:fs';
import path from 'node:path';
import { onThread, PROC_CHILDREN_SCRIPT } from './process-tree';

export interface StackPids {
  service: number;
  temporal?: number;
  ferretdb?: number;
  redis?: number;
}

export interface StackReading {
  /** MB by part: service, chromium, temporal, ferretdb, redis. */
  mb: Record<string, number>;
  chromium: { processes: number; renderers: number; byType: Record<string, number> };
}

/** The pids of the infrastructure that scripts/infra.sh started under `dataDir` (its pid files). */
export function infraPids(dataDir: string): Omit<StackPids, 'service'> {
  const read = (name: string) => {
    try {
      const pid = Number(fs.readFileSync(path.join(dataDir, 'run', `${name}.pid`), 'utf8').trim());
      return pid > 0 && fs.existsSync(`/proc/${pid}`) ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  return { temporal: read('temporal'), ferretdb: read('ferretdb'), redis: read('redis') };
}

export function readStack(pids: StackPids): Promise<StackReading> {
  return onThread<StackReading>(READ_SCRIPT, pids);
}

const READ_SCRIPT = `${PROC_CHILDREN_SCRIPT}
const pids = workerData;
const below = (root) => {
  const out = [];
  for (const queue = [...(children.get(root) || [])]; queue.length; ) {
    const pid = queue.shift();
    out.push(pid);
    queue.push(...(children.get(pid) || []));
  }
  return out;
};
const kb = (file, field) => {
  try {
    const m = new RegExp('^' + field + ':\\\\s+(\\\\d+) kB', 'm').exec(fs.readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
};
const rss = (pid) => kb('/proc/' + pid + '/status', 'VmRSS');
const mb = (k) => Math.round((k / 1024) * 10) / 10;
const out = { mb: {}, chromium: { processes: 0, renderers: 0, byType: {} } };
out.mb.service = mb(rss(pids.service));
let pss = 0;
for (const pid of below(pids.service)) {
  const k = kb('/proc/' + pid + '/smaps_rollup', 'Pss');
  pss += k;
  out.chromium.processes++;
  try {
    const cmd = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').replace(/\\0/g, ' ');
    const type = (/--type=(\\S+)/.exec(cmd) || [])[1] || 'browser';
    const kind = type === 'utility' ? 'utility ' + ((/--utility-sub-type=(\\S+)/.exec(cmd) || [])[1] || '') : type;
    out.chromium.byType[kind] = (out.chromium.byType[kind] || 0) + 1;
    if (type === 'renderer') out.chromium.renderers++;
  } catch {}
}
out.mb.chromium = mb(pss);
for (const part of ['temporal', 'ferretdb', 'redis']) {
  if (pids[part]) out.mb[part] = mb([pids[part], ...below(pids[part])].reduce((n, p) => n + rss(p), 0));
}
parentPort.postMessage(out);
`;

/** Bytes of the files under `dir` (0 when it is missing). */
export function dirBytes(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p);
    else if (e.isFile()) total += fs.statSync(p, { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/** Bytes of Temporal's SQLite files (the database, its WAL and shared memory) under `dataDir`. */
export function temporalBytes(dataDir: string): number {
  return ['temporal.sqlite', 'temporal.sqlite-wal', 'temporal.sqlite-shm'].reduce((n, f) => n + (fs.statSync(path.join(dataDir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
}
