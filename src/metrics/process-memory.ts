import fs from 'node:fs/promises';

/** Every process below `root` in a parent map (pid → parent pid), children first found first. */
export function descendants(parents: Map<number, number>, root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) (children.get(ppid) ?? children.set(ppid, []).get(ppid)!).push(pid);
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The parent pid in the text of /proc/<pid>/stat (the command name may hold spaces and parentheses). */
export function parentOf(stat: string): number | null {
  const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(after[1]);
  return Number.isInteger(ppid) ? ppid : null;
}

/** Resident bytes from the text of /proc/<pid>/status (`VmRSS:  1234 kB`); 0 if absent. */
export function residentBytes(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Resident memory of the processes this process started (Chromium and its renderers), read
 * from /proc. Null where /proc is not there (not Linux). Processes that end meanwhile are skipped.
 */
export async function childProcessesMemory(root = process.pid): Promise<number | null> {
  let entries: string[];
  try {
    entries = await fs.readdir('/proc');
  } catch {
    return null;
  }
  const parents = new Map<number, number>();
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const ppid = parentOf(await fs.readFile(`/proc/${e}/stat`, 'utf8').catch(() => ''));
        if (ppid !== null) parents.set(Number(e), ppid);
      }),
  );
  const sizes = await Promise.all(descendants(parents, root).map((pid) => fs.readFile(`/proc/${pid}/status`, 'utf8').then(residentBytes, () => 0)));
  return sizes.reduce((a, b) => a + b, 0);
}
