/** The processes of a stack as /proc shows them: the table, and the memory of a process tree. */
import fs from 'node:fs';
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

