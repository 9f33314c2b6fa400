// Where a NOTIFY goes costs commits (actors/events/log.ts Announce): PostgreSQL serialises
// the commits of transactions that NOTIFY (a database-wide lock held from before the commit record
// until the commit is flushed), so a writer that announces inside its transaction caps how many
// transactions every process together can commit. This measures it with pgbench alone, in one run:
// C clients each committing one insert per transaction, with no NOTIFY, with the NOTIFY inside the
// transaction, and with it just after the COMMIT (its own transaction, which writes and flushes
// nothing): what the order batch sends.
//
//   node bench/notify-commit.mjs [--clients 8,32] [--seconds 5] [--rounds 2] [--pg postgres://postgres@127.0.0.1:5432/]
//
// Prints a table of commits/s (the median of the rounds, interleaved) and writes
// bench/results/<iso-date>-notify.json (read by /ops/bench).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
const { values: opts } = parseArgs({
  options: {
    clients: { type: 'string', default: '8,32' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
  },
});
const clients = opts.clients.split(',').map(Number);
const seconds = Number(opts.seconds);
const rounds = Number(opts.rounds);
if (
  !clients.every((c) => Number.isInteger(c) && c >= 1 && c <= 256) ||
  !(seconds >= 1 && seconds <= 600) ||
  !(rounds >= 1 && rounds <= 20)
) {
  console.error(
    'usage: node bench/notify-commit.mjs [--clients 8,32] [--seconds 1..600] [--rounds 1..20] [--pg URL]',
  );
  process.exit(2);
}

/** The three ways, as pgbench scripts: the same insert, and where its NOTIFY goes. */
const SCRIPTS = {
  none: 'begin;\ninsert into t (v) values (1);\ncommit;\n',
  in_transaction:
    "begin;\ninsert into t (v) values (1);\nselect pg_notify('bench_notify', '1');\ncommit;\n",
  after_commit:
    "begin;\ninsert into t (v) values (1);\ncommit;\nselect pg_notify('bench_notify', '1');\n",
};

const db = `bench_notify_${process.pid}`;
const admin = new pg.Client({ connectionString: new URL('postgres', opts.pg).toString() });
await admin.connect();
await admin.query(`create database "${db}"`);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-notify-'));
try {
  const url = new URL(db, opts.pg);
  const conn = new pg.Client({ connectionString: url.toString() });
  await conn.connect();
  await conn.query('create table t (id bigserial primary key, v int not null)');
  await conn.end();
  for (const [name, text] of Object.entries(SCRIPTS))
    fs.writeFileSync(path.join(dir, `${name}.sql`), text);
  const args = (c, name) => [
    '-h',
    url.hostname,
    '-p',
    url.port || '5432',
    '-U',
    decodeURIComponent(url.username) || 'postgres',
    '-n',
    '-M',
    'prepared',
    '-c',
    String(c),
    '-j',
    String(Math.min(c, 2)),
    '-T',
    String(seconds),
    '-f',
    path.join(dir, `${name}.sql`),
    db,
  ];
  const runs = {};
  for (let r = 1; r <= rounds; r++) {
    for (const c of clients) {
      for (const name of Object.keys(SCRIPTS)) {
        const out = spawnSync('pgbench', args(c, name), {
          encoding: 'utf8',
          timeout: (seconds + 60) * 1000,
        });
        const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out.stdout ?? '');
        if (!tps)
          throw new Error(`pgbench failed (${name}, ${c} clients): ${out.stderr || out.error}`);
        (runs[`${c}`] ??= {})[name] = [...(runs[`${c}`]?.[name] ?? []), Number(tps[1])];
        console.error(
          `round ${r}/${rounds}: ${c} clients, ${name}: ${Math.round(Number(tps[1]))} commits/s`,
        );
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const summary = Object.fromEntries(
    Object.entries(runs).map(([c, by]) => {
      const m = Object.fromEntries(
        Object.entries(by).map(([k, xs]) => [k, Math.round(median(xs))]),
      );
      return [
        c,
        {
          commits_per_s: m,
          after_commit_to_in_transaction:
            Math.round((m.after_commit / m.in_transaction) * 100) / 100,
        },
      ];
    }),
  );
  const result = {
    scenario: 'notify',
    bench: 'bench/notify-commit.mjs',
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg() },
    options: { clients, seconds, rounds },
    scripts: SCRIPTS,
    runs,
    summary,
  };
  fs.mkdirSync(RESULTS, { recursive: true });
  const file = path.join(
    RESULTS,
    `${result.date.replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}-notify.json`,
  );
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log('clients  none  in_transaction  after_commit  after/in');
  for (const [c, s] of Object.entries(summary)) {
    console.log(
      `${c.padStart(7)}  ${String(s.commits_per_s.none).padStart(4)}  ${String(s.commits_per_s.in_transaction).padStart(14)}  ${String(s.commits_per_s.after_commit).padStart(12)}  ${s.after_commit_to_in_transaction}x`,
    );
  }
  console.log(`written: ${path.relative(process.cwd(), file)}`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await admin.query(`drop database if exists "${db}" with (force)`);
  await admin.end();
}
