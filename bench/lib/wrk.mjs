// wrk runs for the bench drivers: one GET target, bounded in time, its output parsed (requests/s,
// latency percentiles, socket errors, non-2xx answers).
import { spawn, spawnSync } from 'node:child_process';

const UNIT_MS = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const ms = (v, unit) => Number(v) * UNIT_MS[unit];
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

/** wrk's version, or undefined when it is not installed. */
export function wrkVersion() {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8', timeout: 5000 });
  if (r.error) return undefined;
  const m = /wrk\s+(\S+)/.exec(`${r.stdout}${r.stderr}`);
  return m ? m[1] : 'unknown';
}

export function parseWrk(out) {
  const lat = (pct) => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(out);
    return m ? round(ms(m[1], m[2])) : undefined;
  };
  const stats =
    /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)/m.exec(
      out,
    );
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (!rps || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  return {
    requests: Number(total[1]),
    requests_per_s: Number(rps[1]),
    latency_ms: {
      avg: stats ? round(ms(stats[1], stats[2])) : undefined,
      p50: lat(50),
      p75: lat(75),
      p90: lat(90),
      p99: lat(99),
      max: stats ? round(ms(stats[5], stats[6])) : undefined,
    },
    non_2xx: non2xx ? Number(non2xx[1]) : 0,
    socket_errors: sock
      ? { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4] }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

/**
 * `wrk -t{threads} -c{connections} -d{seconds}s --latency --timeout {timeout}s url`, killed if it
 * overruns by 30 s. `onStart` gets a stop function (for Ctrl-C).
 */
export function runWrk({ url, threads = 1, connections, seconds, timeoutS = 10, onStart }) {
  const args = [
    `-t${threads}`,
    `-c${connections}`,
    `-d${seconds}s`,
    '--latency',
    '--timeout',
    `${timeoutS}s`,
    url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    onStart?.(() => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), (seconds + 30) * 1000);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      if (code !== 0)
        return reject(
          new Error(`wrk ${args.join(' ')} failed (code ${code}, signal ${signal}): ${err || out}`),
        );
      try {
        resolve({ ...parseWrk(out), command: `wrk ${args.join(' ')}`, raw: out });
      } catch (e) {
        reject(e);
      }
    });
  });
}
