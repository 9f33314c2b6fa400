// Runs the docs pages' shell examples as written: the small part of sh they use (assignments,
// $(...) capture, $VAR, $((VAR-N)), quoting, line continuations), curl's flags (-s -i -N -X -H -d -o
// -w) as a fetch, and jq's field paths (.a.b[0].c) for captures. A stream (-N) is read until the
// caller's `until` says it has shown enough (by default its first chunk), then dropped as Ctrl-C
// would; what it printed is the body. A comment line above a command
// that starts with a status ("# 403: ...") is the answer the docs promise; otherwise a 2xx.

export type Ran = { command: string; status: number; expected: number | null; body: string };
type Env = Record<string, string>;

/** Commands of a block with the status their comment documents (continuations joined). */
export function commandsOf(block: string): { command: string; expected: number | null }[] {
  const lines = block.replace(/\\\n\s*/g, '').split('\n');
  const out: { command: string; expected: number | null }[] = [];
  let expected: number | null = null;
  for (const line of lines) {
    const l = line.trim();
    if (!l) continue;
    if (l.startsWith('#')) {
      const m = /^#\s*(\d{3}):/.exec(l);
      expected = m ? Number(m[1]) : null;
      continue;
    }
    out.push({ command: l, expected });
    expected = null;
  }
  return out;
}

/** Splits at a top-level character (outside quotes and $(...)). */
function splitTop(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\' && quote === '"') {
        cur += c + s[++i];
        continue;
      }
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === sep && depth === 0) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  return parts.map((p) => p.trim());
}

/** $((VAR-N)), ${VAR}, $VAR inside an unquoted or double-quoted word. */
function expand(s: string, env: Env): string {
  return s
    .replace(/\$\(\(\s*([A-Za-z_]\w*)\s*([-+])\s*(\d+)\s*\)\)/g, (_, v, op, n) => {
      const x = Number(env[v]);
      if (!Number.isFinite(x)) throw new Error(`$((${v}${op}${n})): ${v} is not a number`);
      return String(op === '-' ? x - Number(n) : x + Number(n));
    })
    .replace(/\$\{?([A-Za-z_]\w*)\}?/g, (_, v) => {
      if (!(v in env)) throw new Error(`unset variable ${v}`);
      return env[v];
    });
}

/** Shell words of a simple command. */
export function words(s: string, env: Env): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (s[i] === ' ') i++;
    if (i >= s.length) break;
    let w = '';
    while (i < s.length && s[i] !== ' ') {
      const c = s[i];
      if (c === "'") {
        const j = s.indexOf("'", i + 1);
        w += s.slice(i + 1, j);
        i = j + 1;
      } else if (c === '"') {
        let j = i + 1;
        let raw = '';
        while (s[j] !== '"') {
          if (s[j] === '\\' && '"\\$'.includes(s[j + 1])) {
            raw += s[j + 1] === '$' ? '\u0000' : s[j + 1];
            j += 2;
          } else raw += s[j++];
        }
        w += expand(raw, env).replace(/\u0000/g, '$');
        i = j + 1;
      } else {
        let j = i;
        while (j < s.length && !' \'"'.includes(s[j])) j++;
        w += expand(s.slice(i, j), env);
        i = j;
      }
    }
    out.push(w);
  }
  return out;
}

/** jq's field paths: `.a`, `.a.b`, `.a[0].b`. */
export function jqPath(value: unknown, filter: string): unknown {
  if (!/^(\.[A-Za-z_]\w*|\[\d+\])+$/.test(filter))
    throw new Error(`jq filter beyond field paths: ${filter}`);
  let v: any = value;
  for (const [, name, index] of filter.matchAll(/\.([A-Za-z_]\w*)|\[(\d+)\]/g))
    v = v?.[name ?? Number(index)];
  return v;
}

type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** When a stream (-N) has shown what a reader wanted: by default its first chunk (the answer's head is in). */
export type Until = (body: string) => boolean;
const FIRST_CHUNK: Until = () => true;

/** What a stream sends until `until` says it is enough (or it ends); then the connection is dropped, as Ctrl-C does. */
async function watch(res: Response, until: Until, abort: () => void): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let out = '';
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      out += decoder.decode(r.value, { stream: true });
      if (until(out)) break;
    }
  } finally {
    abort();
    await reader.cancel().catch(() => {});
  }
  return out;
}

async function curl(
  args: string[],
  fetcher: Fetch,
  until: Until,
): Promise<{ status: number; body: string }> {
  if (args[0] !== 'curl') throw new Error(`not a curl command: ${args.join(' ')}`);
  let method: string | undefined;
  let data: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  let stream = false;
  for (let i = 1; i < args.length; i++) {
    const a = args[i];
    if (/^-[siN]+$/.test(a)) stream ||= a.includes('N');
    else if (a.startsWith('-X')) method = a.length > 2 ? a.slice(2) : args[++i];
    else if (a === '-H') {
      const h = args[++i];
      const k = h.indexOf(':');
      headers[h.slice(0, k).trim().toLowerCase()] = h.slice(k + 1).trim();
    } else if (a === '-d' || a === '--data') data = args[++i];
    else if (a === '-o' || a === '-w') i++;
    else if (a.startsWith('-')) throw new Error(`curl flag the runner does not know: ${a}`);
    else url = a;
  }
  if (!url) throw new Error(`no URL in ${args.join(' ')}`);
  if (data !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded'; // as curl does
  const ctl = new AbortController();
  const res = await fetcher(url, {
    method: method ?? (data !== undefined ? 'POST' : 'GET'),
    headers,
    body: data,
    redirect: 'manual',
    signal: ctl.signal,
  });
  return {
    status: res.status,
    body: stream ? await watch(res, until, () => ctl.abort()) : await res.text(),
  };
}

/** Runs one command: an assignment (plain or captured from curl | jq) or a curl (| jq to display). */
export async function run(
  command: string,
  expected: number | null,
  env: Env,
  fetcher: Fetch,
  until: Until = FIRST_CHUNK,
): Promise<Ran> {
  const assign = /^([A-Za-z_]\w*)=(.*)$/.exec(command);
  if (assign && !assign[2].startsWith('$(')) {
    // A placeholder such as <your 80-character key> keeps what the runner put in (a registered key).
    if (!/^<.*>$/.test(assign[2])) env[assign[1]] = words(assign[2], env).join(' ');
    return { command, status: 0, expected, body: '' };
  }
  const inner = assign ? assign[2].slice(2, -1) : command;
  const [curlPart, ...pipes] = splitTop(inner, '|');
  const r = await curl(words(curlPart, env), fetcher, until);
  if (assign) {
    const jq = words(pipes[0] ?? '', env);
    if (jq[0] !== 'jq') throw new Error(`a capture must pipe into jq: ${command}`);
    const filter = jq.filter((w) => !w.startsWith('-'))[1];
    const v = jqPath(JSON.parse(r.body), filter);
    env[assign[1]] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return { command, status: r.status, expected, body: r.body };
}
