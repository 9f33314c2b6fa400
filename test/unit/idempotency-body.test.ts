// What makes a retry "the same request" under an Idempotency-Key (src/http/idempotency.ts): the
// body's bytes, except the random boundary a multipart sender draws for every send.
import t from 'tap';
import { comparableBody, ticketOf } from '../../src/http/idempotency.js';

const multipart = (boundary: string, content: string) =>
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`, 'latin1');
const type = (boundary: string) => `multipart/form-data; boundary=${boundary}`;
const hashOf = (body: Buffer, contentType: string) =>
  ticketOf({ 'idempotency-key': 'k', 'content-type': contentType }, 'POST', '/cart/upload', undefined, body)!.hash;

t.test('two sends of one upload are the same request; another file is not', async (t) => {
  const a = hashOf(multipart('----a1', 'market,offer_key\nh2,x\n'), type('----a1'));
  const b = hashOf(multipart('xyz987', 'market,offer_key\nh2,x\n'), `multipart/form-data; boundary="xyz987"`);
  t.equal(a, b, 'only the boundary differs');
  t.not(a, hashOf(multipart('----a1', 'market,offer_key\nh2,y\n'), type('----a1')), 'the content differs');
  const binary = Buffer.concat([Buffer.from('--b\r\n\r\n'), Buffer.from([0, 255, 128, 10]), Buffer.from('\r\n--b--')]);
  t.equal(Buffer.from(comparableBody(binary, type('b')) as string, 'latin1').subarray(14, 18).toString('hex'), '00ff800a', 'binary parts are kept byte for byte');
});

t.test('other bodies are compared byte for byte', async (t) => {
  const json = Buffer.from('{"qty":1}');
  t.equal(comparableBody(json, 'application/json'), json);
  t.not(hashOf(Buffer.from('{"qty":1}'), 'application/json'), hashOf(Buffer.from('{"qty": 1}'), 'application/json'));
});
