/** CPU time of the parts of a stack (service, Chromium, Temporal, FerretDB, Redis, the bench), read from /proc. */
import fs from 'node:fs';
import { descendants } from '../src/metrics/process-memory';
import { processTable } from './process-tree';

export type CpuSnapshot = Map<number, { part: string; ticks: number }>;

/** What part of the stack a process outside the service's tree is, by its command line. */
function partOutside(pid: number): string | undefined {
  let cmd = '';
  try {
    cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
  if (/temporal/.test(cmd)) return 'temporal server';
  if (/ferretdb/.test(cmd)) return 'ferretdb';
  if (/redis-server/.test(cmd)) return 'redis';
  return undefined;
}

/** What part of the stack a process below the service is: Chromium's renderers, its GPU and utility processes, or its browser. */
function chromiumPart(pid: number): string | undefined {
  let cmd = '';
  try {
    cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
  return /--type=renderer/.test(cmd) ? 'chromium renderers' : /--type=/.test(cmd) ? 'chromium gpu and utility' : 'chromium browser';
}

/** CPU time (clock ticks) of every process now, keyed by pid, with what part of the stack it is. */
export function cpuSnapshot(service: number): CpuSnapshot {
  const { stats, parents } = processTable();
  const below = new Set(descendants(parents, service));
  const out: CpuSnapshot = new Map();
  for (const [pid, st] of stats) {
    const part = pid === service ? 'service (Node)' : pid === process.pid ? 'bench (model, pages, clients)' : below.has(pid) ? chromiumPart(pid) : partOutside(pid);
    if (!part) continue;
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    out.set(pid, { part, ticks: Number(f[11]) + Number(f[12]) });
  }
  return out;
}

/** CPU milliseconds per part of the stack between two snapshots (a process started meanwhile counts from zero). */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): Record<string, number> {
  const msPerTick = 1000 / 100; // USER_HZ
  const out: Record<string, number> = {};
  for (const [pid, now] of b) out[now.part] = (out[now.part] ?? 0) + (now.ticks - (a.get(pid)?.ticks ?? 0)) * msPerTick;
  return Object.fromEntries(Object.entries(out).sort((x, y) => y[1] - x[1]));
}

/** Waits (up to a minute) until the stack uses less than a quarter of a core over a second. */
export async function quiet(service: number): Promise<boolean> {
  for (const end = performance.now() + 60_000; performance.now() < end; ) {
    const a = cpuSnapshot(service);
    await new Promise((r) => setTimeout(r, 1000));
    const used = Object.values(cpuBetween(a, cpuSnapshot(service))).reduce((x, y) => x + y, 0);
    if (used < 250) return true;
  }
  return false;
}
