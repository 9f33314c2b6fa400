// Behind a balancer (CONTRACT.md "Several front ends"; SVC_TRUSTED_PROXIES): the per-address limits
// count the client the trusted proxy names in X-Forwarded-For, and a peer that is not trusted is
// counted under its own address whatever header it sends. The public market stream's limit of 10
// per address is the probe; the service trusts 127.0.0.1, and 127.0.0.2 is an untrusted peer.
import t from 'tap';
import { Agent } from 'undici';
import { startTestService } from '../helpers/service.js';
import { MARKET_STREAMS_PER_ADDRESS } from '../../src/http/limits.js';

const svc = await startTestService(t, { SVC_TRUSTED_PROXIES: '127.0.0.1' });
const proxy = new Agent({ keepAliveTimeout: 1000, localAddress: '127.0.0.1', connections: 64 });
const stranger = new Agent({ keepAliveTimeout: 1000, localAddress: '127.0.0.2', connections: 64 });
const aborts: AbortController[] = [];
t.teardown(async () => {
  aborts.forEach((a) => a.abort());
  await Promise.all([proxy.destroy(), stranger.destroy()]);
});

/** Opens the m15 stream through `via` with `forwardedFor`; the status (a stream stays open until the test ends). */
async function open(via: Agent, forwardedFor: string): Promise<number> {
  const a = new AbortController();
  aborts.push(a);
  const res = await fetch(`${svc.url}/api/v1/markets/m15/stream`, {
    headers: { accept: 'text/event-stream', 'x-forwarded-for': forwardedFor },
    signal: a.signal,
    dispatcher: via,
  } as RequestInit);
  if (res.status !== 200) await res.arrayBuffer();
  return res.status;
}

t.test('through the trusted proxy, each client has its own places', async (t) => {
  const first = [];
  for (let i = 0; i < MARKET_STREAMS_PER_ADDRESS; i++) first.push(await open(proxy, '203.0.113.5'));
  t.same(first, Array(MARKET_STREAMS_PER_ADDRESS).fill(200), 'one client opens its 10');
  t.equal(await open(proxy, '203.0.113.5'), 429, 'its 11th is refused');
  t.equal(await open(proxy, '6.6.6.6, 203.0.113.5'), 429, 'whatever it prepends to the header');
  t.equal(await open(proxy, '203.0.113.6'), 200, 'another client behind the same proxy is not');
  t.equal(
    svc.services.streams.marketByAddress.count('203.0.113.5'),
    MARKET_STREAMS_PER_ADDRESS,
    "counted under the client's address",
  );
});

t.test(
  'an untrusted peer is counted under its own address, whatever X-Forwarded-For it sends',
  async (t) => {
    const opened = [];
    for (let i = 0; i < MARKET_STREAMS_PER_ADDRESS; i++)
      opened.push(await open(stranger, `198.51.100.${i + 1}`));
    t.same(opened, Array(MARKET_STREAMS_PER_ADDRESS).fill(200));
    t.equal(await open(stranger, '198.51.100.200'), 429, 'a forged header buys no new place');
    t.equal(
      svc.services.streams.marketByAddress.count('127.0.0.2'),
      MARKET_STREAMS_PER_ADDRESS,
      'all of them counted under 127.0.0.2',
    );
  },
);

t.test(
  'fuzz: whatever X-Forwarded-For a client sends, through the proxy or not, it gets an answer and the service stays up',
  async (t) => {
    const hostile = [
      ',,,,',
      ' ',
      '[',
      '[::1',
      '::ffff:',
      '1.2.3.4:80',
      'unknown',
      '2001:db8::/32',
      '%00',
      '999.1.1.1',
      Array.from({ length: 2000 }, (_, i) => `10.0.${i % 256}.${i % 200}`).join(','),
      'x'.repeat(6000),
      Array(3000).fill('').join(','),
    ];
    for (const via of [proxy, stranger]) {
      for (const h of hostile) {
        const res = await fetch(`${svc.url}/api/v1/markets/m15/stream`, {
          headers: { 'x-forwarded-for': h },
          dispatcher: via,
        } as RequestInit);
        await res.arrayBuffer();
        t.ok(res.status < 500, `${h.slice(0, 30)}${h.length > 30 ? '...' : ''}: ${res.status}`);
      }
    }
    t.equal((await svc.get('/healthz')).status, 200, 'the process is still up');
  },
);
