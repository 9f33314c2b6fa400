// Where webhooks may point and how an attempt is made (src/net/webhook-address.ts, actors/webhooks/send.ts):
// private, loopback and link-local addresses (IPv4, IPv6, IPv6 forms that embed an IPv4 address,
// and what a name resolves to) are refused unless allowed, at registration and again before each attempt, which then connects
// to the address it checked; the signature verifies with the Standard Webhooks library; the retry
// delays double to their cap.
import t from 'tap';
import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { checkWebhookUrl, isPrivateAddress, type Resolver } from '../../src/net/webhook-address.js';
import { send, signedHeaders } from '../../actors/webhooks/send.js';
import { retryDelaySeconds, RETRY_CAP_SECONDS } from '../../actors/webhooks/queue.js';
import { newSecret } from '../../actors/webhooks/actor.js';

t.test('private, loopback, link-local and reserved addresses', async (t) => {
  for (const ip of [
    '127.0.0.1',
    '127.8.9.10',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    'not-an-ip',
  ]) {
    t.ok(isPrivateAddress(ip), ip);
  }
  for (const ip of [
    '93.184.215.14',
    '8.8.8.8',
    '172.32.0.1',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])
    t.notOk(isPrivateAddress(ip), ip);
});

t.test(
  'IPv6 forms that embed a refused IPv4 address are refused (CONTRACT.md "Events" → Webhooks)',
  async (t) => {
    // Five forms an outside probe may try, then each embedding of 127.0.0.1 and 169.254.169.254.
    for (const url of [
      'http://[::127.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[2002:7f00:1::]/',
    ]) {
      t.match(
        await checkWebhookUrl(url, false),
        { ok: false, refused: /private, loopback or link-local/ },
        url,
      );
    }
    for (const ip of [
      '::127.0.0.1',
      '::a9fe:a9fe',
      '::ffff:7f00:1',
      '::ffff:0:7f00:1',
      '64:ff9b::127.0.0.1',
      '64:ff9b::10.1.2.3',
      '64:ff9b:1::808:808',
      '2002:a00:1::',
      '2002:c0a8:101:1::1',
      '2001:0:7f00:1::',
      '2001:0:808:808:0:0:80ff:fefe',
      '2001:0:808:808:0:0:5601:5601',
    ])
      t.ok(isPrivateAddress(ip), ip);
    // The same forms around public IPv4 addresses stay accepted, and so do ordinary global IPv6 addresses.
    for (const ip of [
      '::8.8.8.8',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2001:0:808:808:0:0:f7f7:f7f7',
      '2606:4700:4700::1111',
      '2a00:1450:4001:82a::200e',
    ]) {
      t.notOk(isPrivateAddress(ip), ip);
    }
    t.match(await checkWebhookUrl('https://[2606:4700:4700::1111]/hook', false), {
      ok: true,
      address: { address: '2606:4700:4700::1111', family: 6 },
    });
    t.match(await checkWebhookUrl('https://[64:ff9b::808:808]/hook', false), { ok: true });
    // A name is judged by the same rule on what it resolves to (at registration and before each attempt).
    t.match(
      await checkWebhookUrl('http://nat64.example/', false, async () => [
        { address: '64:ff9b::7f00:1', family: 6 },
      ]),
      { ok: false, refused: /resolves to 64:ff9b::7f00:1/ },
    );
  },
);

t.test(
  'property: every embedding of an IPv4 address is refused exactly when the address is',
  async (t) => {
    const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
    const forms = ([a, b, c, d]: number[]) => [
      `::${hex(a, b)}:${hex(c, d)}`,
      `::ffff:${a}.${b}.${c}.${d}`,
      `::ffff:0:${hex(a, b)}:${hex(c, d)}`,
      `64:ff9b::${hex(a, b)}:${hex(c, d)}`,
      `2002:${hex(a, b)}:${hex(c, d)}::1`,
      // Teredo: the address as the server, with a public client (8.8.8.8 inverted), and as the client.
      `2001:0:${hex(a, b)}:${hex(c, d)}:0:0:f7f7:f7f7`,
      `2001:0:808:808:0:0:${hex(a ^ 0xff, b ^ 0xff)}:${hex(c ^ 0xff, d ^ 0xff)}`,
    ];
    const octet = fc.integer({ min: 0, max: 255 });
    // Half the draws from the refused ranges' neighbourhoods (0, 10, 100, 127, 169, 172, 192, 198, 203, 224+), half anywhere.
    const first = fc.oneof(
      octet,
      fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 240, 255),
    );
    fc.assert(
      fc.property(fc.tuple(first, octet, octet, octet), (v4) => {
        const refused = isPrivateAddress(v4.join('.'));
        for (const ip of forms(v4))
          if (isPrivateAddress(ip) !== refused)
            throw new Error(`${ip} (${v4.join('.')}): ${!refused ? 'refused' : 'accepted'}`);
      }),
      { numRuns: 2000 },
    );
    t.pass('each form agrees with its IPv4 address');
  },
);

t.test('URLs: shape, IP literals, names by what they resolve to', async (t) => {
  const dns: Record<string, string[]> = {
    'hooks.example': ['93.184.215.14'],
    'inside.example': ['10.0.0.7'],
    'mixed.example': ['93.184.215.14', '127.0.0.1'],
    'v6.example': ['::1'],
  };
  const resolve: Resolver = async (host) => {
    const a = dns[host];
    if (!a) throw new Error('ENOTFOUND');
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const verdict = (url: string, allow = false) => checkWebhookUrl(url, allow, resolve);
  t.match(await verdict('https://hooks.example/x'), {
    ok: true,
    address: { address: '93.184.215.14', family: 4 },
  });
  t.match(await verdict('http://93.184.215.14:8080/x'), {
    ok: true,
    address: { address: '93.184.215.14' },
  });
  for (const url of [
    'http://inside.example/',
    'http://mixed.example/',
    'http://v6.example/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://0x7f.1/',
    'http://127.1/',
  ]) {
    t.match(await verdict(url), { ok: false, refused: /private, loopback or link-local/ }, url);
  }
  t.match(await verdict('http://nowhere.example/'), { ok: false, refused: /does not resolve/ });
  for (const url of [
    'ftp://hooks.example/',
    'hooks.example/x',
    'http://u:p@hooks.example/',
    `https://hooks.example/${'x'.repeat(2100)}`,
  ]) {
    t.equal((await verdict(url)).ok, false, url.slice(0, 40));
  }
  t.match(
    await verdict('http://127.0.0.1/x', true),
    { ok: true, address: undefined },
    'allowed: not resolved, not refused',
  );
});

t.test(
  'an attempt: refused before sending without the setting, signed and capped with it',
  async (t) => {
    const hits: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.statusCode = req.url === '/big' ? 200 : 202;
        res.end(req.url === '/big' ? 'x'.repeat(1 << 20) : '');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const port = (server.address() as AddressInfo).port;
    const secret = newSecret();
    const body = JSON.stringify({ id: 3, type: 'order.paid', created_at: 1, data: {} });
    const at = Date.now() / 1000;
    const attempt = (url: string, allowPrivate: boolean, resolve?: Resolver) =>
      send({ url, secret, msgId: 'evt_1_3', body, at, allowPrivate }, resolve);

    t.match(await attempt(`http://127.0.0.1:${port}/x`, false), {
      status: null,
      error: /^not sent: .*private, loopback or link-local/,
    });
    // A name that resolves to loopback at delivery time is refused too (and the receiver never hears of it).
    t.match(
      await attempt(`http://rebound.example:${port}/x`, false, async () => [
        { address: '127.0.0.1', family: 4 },
      ]),
      { status: null, error: /resolves to 127\.0\.0\.1/ },
    );
    t.equal(hits.length, 0, 'nothing was sent');

    t.same(await attempt(`http://127.0.0.1:${port}/x`, true), { status: 202, error: null });
    t.equal(hits.length, 1);
    t.same(
      new Webhook(secret).verify(hits[0].body, hits[0].headers as Record<string, string>),
      JSON.parse(body),
      'verifies with the library',
    );
    t.equal(hits[0].headers['webhook-id'], 'evt_1_3');
    t.equal(hits[0].headers['webhook-timestamp'], String(Math.floor(at)));
    t.same(
      await attempt(`http://127.0.0.1:${port}/big`, true),
      { status: 200, error: null },
      'a big answer is read only in part',
    );
    t.match(await attempt('http://127.0.0.1:1/x', true), { status: null, error: /ECONNREFUSED/ });
    t.match(
      signedHeaders(secret, 'evt_1_3', at, body)['webhook-signature'],
      /^v1,[A-Za-z0-9+/]+=*$/,
    );
  },
);

t.test('retry delays double from 5 s to an hour', async (t) => {
  t.same([1, 2, 3, 4].map(retryDelaySeconds), [5, 10, 20, 40]);
  t.equal(retryDelaySeconds(30), RETRY_CAP_SECONDS);
  t.equal(retryDelaySeconds(1000), RETRY_CAP_SECONDS);
});
