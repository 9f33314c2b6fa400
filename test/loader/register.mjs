// Loaded into every test process (package.json "tap" node-arg). The tests run compiled, from
// dist/test (test/loader/compile.mjs): no module hooks here.
// When SVC_TEST_TIMINGS names a folder (test/run.mjs sets it), the process writes there at exit
// where its time went: wall and CPU time, and the phases test/helpers/timing.ts recorded.
import fs from 'node:fs';
import path from 'node:path';
import { Agent, setGlobalDispatcher } from 'undici';
import { sourcePath } from './compile.mjs';

// fetch's shared connection pool lets idle sockets go after 250 ms, not undici's default 4 s: an
// idle keep-alive socket holds the event loop, and a file that used fetch lived 4 s past its last
// test.
setGlobalDispatcher(new Agent({ keepAliveTimeout: 250, keepAliveMaxTimeout: 250 }));

// The file under test, by its source name (tap runs its compiled copy).
const file = process.argv[1] ? sourcePath(path.relative(process.cwd(), process.argv[1])) : '';

// A file test/run.mjs puts on the embedded server (its ON_EMBEDDED, when DATABASE_URL names
// another) finds that server in DATABASE_URL, before any module reads it; workers and child
// processes inherit it.
const onEmbedded = JSON.parse(process.env.SVC_TEST_ON_EMBEDDED || '[]').includes(file);
if (onEmbedded) process.env.DATABASE_URL = process.env.SVC_TEST_EMBEDDED_URL;

const dir = process.env.SVC_TEST_TIMINGS;
if (dir && file) {
  const registry = (globalThis[Symbol.for('agent-market.test-timing')] ??= { phases: {} });
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const record = {
      file,
      pid: process.pid,
      ...(onEmbedded ? { pass: 'embedded' } : {}),
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      phases: registry.phases,
    };
    try {
      fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(record));
    } catch {
      // the run's folder is gone (the run was stopped): nothing to report to
    }
  });
}
