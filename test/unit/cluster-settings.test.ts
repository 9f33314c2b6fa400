// The settings a node behind a balancer reads (CONTRACT.md "Running it"): SVC_NODE_NAME and
// SVC_TRUSTED_PROXIES, validated at start-up (a bad value is a configuration error, never a later 5xx).
import t from 'tap';
import { loadConfig } from '../../src/config.js';

t.test('SVC_NODE_NAME', async (t) => {
  t.equal(loadConfig({}).nodeName, undefined, 'unset: HOST:PORT once it listens');
  t.equal(loadConfig({ SVC_NODE_NAME: 'node-2' }).nodeName, 'node-2');
  t.throws(() => loadConfig({ SVC_NODE_NAME: 'two words' }), /SVC_NODE_NAME must be/);
  t.throws(() => loadConfig({ SVC_NODE_NAME: 'x'.repeat(65) }), /SVC_NODE_NAME must be 1..64 printable characters/);
});

t.test('SVC_TRUSTED_PROXIES', async (t) => {
  t.same(loadConfig({}).trustedProxies, [], 'unset: no header is believed');
  t.equal(loadConfig({ SVC_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,::1' }).trustedProxies.length, 3);
  t.throws(() => loadConfig({ SVC_TRUSTED_PROXIES: '127.0.0.1,balancer' }), /SVC_TRUSTED_PROXIES: not an address or network: "balancer"/);
  t.throws(() => loadConfig({ SVC_TRUSTED_PROXIES: '10.0.0.0/40' }), /SVC_TRUSTED_PROXIES: not an address or network/);
});
