// The client's address behind trusted proxies (src/http/client-address.ts): the peer's own unless
// it is trusted; then X-Forwarded-For read from the right past trusted proxies. Whatever a client
// writes into the header, it cannot choose the address it is counted under.
import t from 'tap';
import fc from 'fast-check';
import { clientAddress, parseTrustedProxies } from '../../src/http/client-address.js';

const trusted = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1');
const MAPPED_LOOPBACK = '0000:0000:0000:0000:0000:ffff:7f00:0001'; // how uWS writes 127.0.0.1 on a dual-stack socket

t.test('examples', async (t) => {
  t.equal(
    clientAddress('203.0.113.9', '198.51.100.1', trusted),
    '203.0.113.9',
    'an untrusted peer: its header is ignored',
  );
  t.equal(
    clientAddress('127.0.0.1', undefined, trusted),
    '127.0.0.1',
    'a trusted peer without the header: itself',
  );
  t.equal(
    clientAddress('127.0.0.1', '198.51.100.1', trusted),
    '198.51.100.1',
    'a trusted peer: the client it names',
  );
  t.equal(
    clientAddress(MAPPED_LOOPBACK, '198.51.100.1', trusted),
    '198.51.100.1',
    "uWS's IPv4-mapped form of a trusted peer",
  );
  t.equal(
    clientAddress('127.0.0.1', '198.51.100.1, 10.1.2.3', trusted),
    '198.51.100.1',
    'past a chain of trusted proxies',
  );
  t.equal(
    clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.1', trusted),
    '198.51.100.1',
    'what the client prepended is not believed',
  );
  t.equal(clientAddress('127.0.0.1', 'not-an-address, 198.51.100.1', trusted), '198.51.100.1');
  t.equal(
    clientAddress('127.0.0.1', '10.0.0.5, nonsense', trusted),
    '127.0.0.1',
    "a hop that is no address: the trusted peer's own view stands",
  );
  t.equal(
    clientAddress('::1', '2001:db8::7', trusted),
    '2001:db8:0:0:0:0:0:7',
    'IPv6 as eight groups',
  );
  t.equal(
    clientAddress('127.0.0.1', '198.51.100.1', []),
    '127.0.0.1',
    'no trusted proxies: always the peer',
  );
  t.throws(() => parseTrustedProxies('127.0.0.1, nope'), /not an address or network: "nope"/);
  t.throws(() => parseTrustedProxies('10.0.0.0/33'), /not an address or network/);
  t.same(parseTrustedProxies(''), []);
});

t.test(
  'a client behind a trusted proxy is counted under the address the proxy saw, whatever it wrote',
  async () => {
    const v4 = fc
      .tuple(fc.integer({ min: 11, max: 126 }), fc.nat(255), fc.nat(255), fc.nat(255))
      .map((p) => p.join('.'));
    const junk = fc.oneof(
      v4,
      fc.string({ maxLength: 20 }).filter((s) => !s.includes(',')),
      fc.constant('10.9.9.9'),
      fc.constant('127.0.0.1'),
    );
    fc.assert(
      fc.property(fc.array(junk, { maxLength: 5 }), v4, (written, real) => {
        // The proxy appends the address it received from to what the client sent.
        const header = [...written, real].join(', ');
        return clientAddress('127.0.0.1', header, trusted) === real;
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.array(junk, { maxLength: 5 }),
        (written) => clientAddress('203.0.113.9', written.join(', '), trusted) === '203.0.113.9',
      ),
      { numRuns: 200 },
    );
  },
);
