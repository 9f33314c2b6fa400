// CPU accounting from /proc for the bench drivers: a process's ticks, its threads' ticks, and the
// ticks of every PostgreSQL process with the database of each client backend.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export const CLK_TCK = (() => {
  try {
    return (
      Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5000 }).trim()) ||
      100
    );
  } catch {
    return 100;
  }
})();

export function procTicks(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
  } catch {
    return undefined;
  }
}

/** Per-thread ticks of a process: { tid: { comm, ticks } }. */
export function threadTicks(pid) {
  const out = {};
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const s = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        out[tid] = { comm, ticks: Number(f[11]) + Number(f[12]) };
      } catch {}
    }
  } catch {}
  return out;
}

/**
 * ticks of every process whose comm is `postgres`, with the database of a client backend (from its
 * process title "postgres: 15/main: <user> <db> <host>(<port>) <state>"); '' = a background process
 * (walwriter, checkpointer, autovacuum, ...).
 */
const backendDb = new Map(); // pid -> database: a backend never changes database, its title does
export function postgresTicks() {
  const out = new Map();
  for (const d of postgresPids()) {
    try {
      const t = procTicks(d);
      if (t === undefined) continue;
      let db = backendDb.get(d);
      if (db === undefined) {
        // a title read while the backend rewrites it can come back cut: only a match is remembered
        const title = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
        const m = /^postgres: [^:]+: \S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(title);
        if (m) backendDb.set(d, (db = m[1]));
      }
      out.set(d, { ticks: t, db: db ?? '' });
    } catch {}
  }
  return out;
}

/** The pids (as /proc names them) of every process whose comm is `postgres`. */
export function postgresPids() {
  const pids = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() === 'postgres') pids.push(d);
    } catch {}
  }
  return pids;
}
