// What makes a retry "the same request" under an Idempotency-Key (src/http/idempotency-key.ts): the
// body's bytes, except the random boundary a multipart sender draws for every send.
import t from 'tap';
import { comparableBody, ticketOf } from '../../src/http/idempotency-key.js';

const multipart = (boundary: string, content: string) =>
  Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`,
    'latin1',
  );
const type = (boundary: string) => `multipart/form-data; boundary=${boundary}`;
const hashOf = (body: Buffer, contentType: string) =>
  ticketOf(
    { 'idempotency-key': 'k', 'content-type': contentType },
    'POST',
    '/cart/upload',
    undefined,
    body,
  )!.hash;

t.test('two sends of one upload are the same request; another file is not', async (t) => {
  const a = hashOf(multipart('----a1', 'market,offer_key\nh2,x\n'), type('----a1'));
  const b = hashOf(
    multipart('xyz987', 'market,offer_key\nh2,x\n'),
    `multipart/form-data; boundary="xyz987"`,
  );
  t.equal(a, b, 'only the boundary differs');
  t.not(
    a,
    hashOf(multipart('----a1', 'market,offer_key\nh2,y\n'), type('----a1')),
    'the content differs',
  );
  const binary = Buffer.concat([
    Buffer.from('--b\r\n\r\n'),
    Buffer.from([0, 255, 128, 10]),
    Buffer.from('\r\n--b--'),
  ]);
  t.equal(
    Buffer.from(comparableBody(binary, type('b')) as string, 'latin1')
      .subarray(14, 18)
      .toString('hex'),
    '00ff800a',
    'binary parts are kept byte for byte',
  );
});

t.test(
  'JSON bodies are the same request when they parse to the same value (CONTRACT.md "Strict requests")',
  async (t) => {
    const h = (s: string) => hashOf(Buffer.from(s), 'application/json');
    t.equal(
      h('{"qty":1,"market":"h2"}'),
      h('{ "market": "h2",\n  "qty": 1 }'),
      'key order and whitespace do not matter',
    );
    t.equal(
      h('{"a":{"y":[1,{"q":2,"p":3}],"x":null}}'),
      h('{"a":{"x":null,"y":[1,{"p":3,"q":2}]}}'),
      'nested objects too',
    );
    t.not(h('{"qty":1}'), h('{"qty":2}'), 'another value is another request');
    t.not(h('{"ids":[1,2]}'), h('{"ids":[2,1]}'), 'array order matters');
    t.not(h('{"qty":1}'), h('{"qty":"1"}'), 'a string is not a number');
  },
);

t.test('other bodies are compared byte for byte', async (t) => {
  const form = Buffer.from('a=1&b=2');
  t.equal(comparableBody(form, 'application/x-www-form-urlencoded'), form);
  t.not(
    hashOf(Buffer.from('a=1&b=2'), 'application/x-www-form-urlencoded'),
    hashOf(Buffer.from('b=2&a=1'), 'application/x-www-form-urlencoded'),
  );
});

t.test('Idempotency-Key: 1..255 printable ASCII (0x21..0x7E), else 400', async (t) => {
  const ticket = (key: string) => () =>
    ticketOf({ 'idempotency-key': key }, 'POST', '/api/v1/orders', undefined, null);
  for (const ok of ['k', '!~', 'a'.repeat(255), 'order-1:2026/11/25'])
    t.doesNotThrow(ticket(ok), JSON.stringify(ok));
  for (const bad of [
    '',
    'a'.repeat(256),
    'two words',
    'caf\u00e9',
    'tab\there',
    'snow\u2603',
    '\u007f',
  ]) {
    t.throws(ticket(bad), { status: 400 }, JSON.stringify(bad));
  }
});
