// Hostile and slow clients (issue 41), on a real service and database over HTTP (the service runs in
// this process, so its resident memory is measured here, after a full collection): 100 sockets that
// never read, each asking again and again for the largest default answers, add less than 300 MB:
// the service answers at the pace the client reads and closes a connection that asks again with an
// answer unread (it had buffered every answer whole: 4.8 KB asked 25 MB).
import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startClockedService } from '../helpers/clocked.js';
import { eventually } from '../helpers/wait.js';
import { rawConnect, type RawConnection } from '../helpers/raw-http.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(150); // 40 s alone on a 2-core machine shared with other runs (2026-11-28)

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** This process's resident memory after a full collection, in MB (the service runs here). */
const residentMb = () => {
  gc();
  return process.memoryUsage().rss / 2 ** 20;
};

const c = await startClockedService(t);
const svc = c.svc;

/** The service's log lines from now on, counted as they come (a scan of new lines only). */
function logCounter(match: (line: Record<string, unknown>) => boolean) {
  let seen = svc.logs.length;
  let n = 0;
  return () => {
    for (; seen < svc.logs.length; seen++) if (match(svc.logs[seen])) n++;
    return n;
  };
}

t.test('100 sockets asking again and again for the largest default answers and never reading add < 300 MB', async (t) => {
  // The largest answers a client gets without arguments: the OpenAPI document (~250 KB) and the h2 menu (~100 KB).
  const asked = ['/api/openapi.json', '/api/v1/markets/h2/deals'];
  const routes = ['/api/openapi.json', '/api/v1/markets/{market_id}/deals'];
  for (const p of asked) await (await svc.get(p)).arrayBuffer();
  const answered = logCounter((l) => l.msg === 'request' && routes.includes(String(l.route)));
  const cut = logCounter((l) => typeof l.msg === 'string' && l.msg.startsWith('answer cut'));
  const before = residentMb();
  const sockets: RawConnection[] = [];
  for (let i = 0; i < 100; i++) sockets.push(await rawConnect(svc.port, t));
  for (const s of sockets) s.socket.pause();
  // Each socket asks again as soon as its last answer is under way (80 rounds: 14 MB asked per
  // socket). A request is answered, or it finds an answer of its socket unread and the service
  // closes that connection (one `answer cut` each); a closed socket's next requests go nowhere.
  let requests = 0;
  for (let round = 0; round < 80 && cut() < sockets.length; round++) {
    const [a, x] = [answered(), cut()];
    const open = sockets.filter((s) => !s.closed());
    for (const s of open) s.get(asked[round % asked.length]);
    requests += open.length;
    // Sockets the service closed that the client has not noticed yet (it does not read).
    const unnoticed = x - (sockets.length - open.length);
    await eventually(() => answered() - a + (cut() - x) >= open.length - unnoticed, `round ${round}: each request answered, or its connection closed`, 1);
  }
  const closed = cut();
  const grown = residentMb() - before;
  t.comment(`${requests} requests on 100 sockets; ${closed} closed by the service; resident memory +${grown.toFixed(0)} MB`);
  t.ok(grown < 300, `resident memory grew ${grown.toFixed(0)} MB (< 300)`);
  t.equal(closed, 100, 'each socket was closed once it asked again with an answer unread');
  for (const s of sockets) s.socket.destroy();
});
