/** The processes of a stack as /proc shows them: the table, and the memory of a process tree. */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { descendants, parentOf } from '../src/metrics/process-memory';

/** Every process now: the text of its /proc stat, and its parent. */
export function processTable(): { stats: Map<number, string>; parents: Map<number, number> } {
  const stats = new Map<number, string>();
  const parents = new Map<number, number>();
  for (const e of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const st = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      stats.set(Number(e), st);
      const ppid = parentOf(st);
      if (ppid !== null) parents.set(Number(e), ppid);
    } catch {
      /* ended meanwhile */
    }
  }
  return { stats, parents };
}

/** Proportional set size of a process and everything below it (bytes). */
export function treePss(root: number): number {
  const { parents } = processTable();
  let total = 0;
  for (const pid of [root, ...descendants(parents, root)]) {
    try {
      const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      total += m ? Number(m[1]) * 1024 : 0;
    } catch {
      /* ended meanwhile */
    }
  }
  return total;
}


/**
 * The same as treePss, read on a thread of its own: reading the memory maps of some forty
 * processes takes about half a second, which would hold the bench's main thread (the model,
 * whose answer times a step's split rests on) that long.
 */
export function treePssApart(root: number): Promise<number> {
  return onThread<number>(TREE_PSS_SCRIPT, root);
}

/** Runs `script` (plain JavaScript, `workerData` its input) on a thread of its own; answers what it posts. */
export function onThread<T>(script: string, data: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(script, { eval: true, workerData: data });
    worker.once('message', (value: T) => resolve(value));
    worker.once('error', reject);
  });
}

/** The start of a thread's script: `fs`, `parentPort`, `workerData`, and `children`, the pids below each pid in /proc. */
export const PROC_CHILDREN_SCRIPT = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const children = new Map();
for (const e of fs.readdirSync('/proc').filter((x) => /^\\d+$/.test(x))) {
  try {
    const st = fs.readFileSync('/proc/' + e + '/stat', 'utf8');
    const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(e));
  } catch {}
}
`;

/** treePss in plain JavaScript, for a worker thread. */
const TREE_PSS_SCRIPT = `${PROC_CHILDREN_SCRIPT}
const root = workerData;
let total = 0;
for (const queue = [root]; queue.length; ) {
  const pid = queue.shift();
  queue.push(...(children.get(pid) || []));
  try {
    const m = /^Pss:\\s+(\\d+) kB/m.exec(fs.readFileSync('/proc/' + pid + '/smaps_rollup', 'utf8'));
    total += m ? Number(m[1]) * 1024 : 0;
  } catch {}
}
parentPort.postMessage(total);
`;
