// The settings a node behind a balancer reads (CONTRACT.md "Running it"): SVC_NODE_NAME and
// SVC_TRUSTED_PROXIES, SVC_REPLICA_URLS, validated at start-up (a bad value is a configuration error, never a later 5xx).
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { covers } from '../../actors/record/replica.js';

t.test('SVC_NODE_NAME', async (t) => {
  t.equal(loadConfig({}).nodeName, undefined, 'unset: HOST:PORT once it listens');
  t.equal(loadConfig({ SVC_NODE_NAME: 'node-2' }).nodeName, 'node-2');
  t.throws(() => loadConfig({ SVC_NODE_NAME: 'two words' }), /SVC_NODE_NAME must be/);
  t.throws(
    () => loadConfig({ SVC_NODE_NAME: 'x'.repeat(65) }),
    /SVC_NODE_NAME must be 1..64 printable characters/,
  );
});

t.test('SVC_TRUSTED_PROXIES', async (t) => {
  t.same(loadConfig({}).trustedProxies, [], 'unset: no header is believed');
  t.equal(
    loadConfig({ SVC_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8,::1' }).trustedProxies.length,
    3,
  );
  t.throws(
    () => loadConfig({ SVC_TRUSTED_PROXIES: '127.0.0.1,balancer' }),
    /SVC_TRUSTED_PROXIES: not an address or network: "balancer"/,
  );
  t.throws(
    () => loadConfig({ SVC_TRUSTED_PROXIES: '10.0.0.0/40' }),
    /SVC_TRUSTED_PROXIES: not an address or network/,
  );
});

t.test('SVC_REPLICA_URLS', async (t) => {
  t.same(loadConfig({}).replicaUrls, [], 'unset: every read on the primary');
  t.same(
    loadConfig({
      SVC_REPLICA_URLS: ' postgres://a@127.0.0.1:5433/postgres , postgresql://b@10.0.0.2/db',
    }).replicaUrls,
    ['postgres://a@127.0.0.1:5433/postgres', 'postgresql://b@10.0.0.2/db'],
  );
  t.throws(
    () => loadConfig({ SVC_REPLICA_URLS: 'replica-1' }),
    /SVC_REPLICA_URLS: "replica-1" is not a URL/,
  );
  t.throws(
    () => loadConfig({ SVC_REPLICA_URLS: 'mysql://x@h/db' }),
    /SVC_REPLICA_URLS: mysql: is not postgres:/,
  );
  t.throws(
    () =>
      loadConfig({
        SVC_REPLICA_URLS: Array.from({ length: 9 }, (_, i) => `postgres://h${i}/db`).join(','),
      }),
    /at most 8/,
  );
});

t.test(
  'a replica serves the record only once it has replayed every close the node has seen',
  async (t) => {
    const at = (open: number, loaded = true) => ({ open, loaded });
    t.ok(covers({ m15: at(10), h2: at(4) }, { m15: 10, h2: 4 }), 'level with the mark');
    t.ok(
      covers({ m15: at(11), h2: at(4) }, { m15: 10, h2: 4 }),
      'ahead of the mark (the node has not heard of a close yet)',
    );
    t.notOk(covers({ m15: at(9), h2: at(4) }, { m15: 10, h2: 4 }), 'one close behind');
    t.notOk(covers({ h2: at(4) }, { m15: 10, h2: 4 }), 'a market it has not opened');
    t.notOk(
      covers({ m15: at(10, false), h2: at(4) }, { m15: 10, h2: 4 }),
      'a market whose history it has not loaded',
    );
  },
);
