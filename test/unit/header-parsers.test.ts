// The request-header and body parsers, fed arbitrary and hostile input: the Accept header's q-values
// (src/web/answers.ts), an amount's decimal places (src/http/validation.ts), the Idempotency-Key and a
// JSON body's comparable form (src/http/idempotency-key.ts). None may throw anything but its 4xx, and
// each answer stays in its range; the service-level check is in test/api/strict-requests.test.ts.
import t from 'tap';
import fc from 'fast-check';
import { acceptQ, prefersJson } from '../../src/web/answers.js';
import { decimalPlaces } from '../../src/http/validation.js';
import { comparableBody, ticketOf } from '../../src/http/idempotency-key.js';
import { HttpError } from '../../src/http/route.js';

/** Accept-like text: media ranges, q parameters (good and broken) and raw noise. */
const acceptPart = fc.oneof(
  fc.constantFrom(
    'text/html',
    'application/json',
    '*/*',
    'text/*',
    'application/*',
    '',
    ';',
    ',',
    'q=',
    ';q=',
    ';q=1.0001',
    ';q=-1',
    ';q=0.9',
  ),
  fc.string({ maxLength: 20 }),
);
const accept = fc.array(acceptPart, { maxLength: 12 }).map((xs) => xs.join(''));

t.test('acceptQ and prefersJson: any header, a q in 0..1, never a throw', async () => {
  fc.assert(
    fc.property(accept, fc.string({ maxLength: 4000 }), (a, noise) => {
      for (const header of [a, noise]) {
        for (const type of ['text/html', 'application/json']) {
          const q = acceptQ(header, type);
          if (!(q >= 0 && q <= 1)) throw new Error(`q ${q} for ${JSON.stringify(header)}`);
        }
        prefersJson(header);
      }
    }),
    { numRuns: 2000 },
  );
});

t.test('decimalPlaces: any text or number, a whole number of places, never a throw', async () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ maxLength: 60 }),
        fc.double(),
        fc.stringMatching(/^[+-]?\d{0,30}(\.\d{0,30})?([eE][+-]?\d{1,12})?$/),
      ),
      (v) => {
        const n = decimalPlaces(v);
        if (!Number.isInteger(n) || n < 0) throw new Error(`places ${n} for ${JSON.stringify(v)}`);
      },
    ),
    { numRuns: 3000 },
  );
  t.equal(decimalPlaces('10.000000000000000001'), 18);
  t.equal(decimalPlaces(10.5), 1);
});

t.test('Idempotency-Key: any header value is a ticket or a 400, nothing else', async () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (key) => {
      try {
        const ticket = ticketOf(
          { 'idempotency-key': key },
          'POST',
          '/api/v1/orders',
          { kind: 'agent', agentId: 1 },
          Buffer.from('{}'),
        );
        if (!ticket || ticket.key !== key || !/^[\x21-\x7e]{1,255}$/.test(key))
          throw new Error(`accepted ${JSON.stringify(key)}`);
      } catch (err) {
        if (!(err instanceof HttpError) || err.status !== 400) throw err;
      }
    }),
    { numRuns: 2000 },
  );
});

t.test(
  "a JSON body's comparable form: any bytes, never a throw; key order and spacing do not count",
  async () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        comparableBody(Buffer.from(bytes), 'application/json');
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const shuffled = JSON.stringify(
          v,
          (_k, x) =>
            x && typeof x === 'object' && !Array.isArray(x)
              ? Object.fromEntries(Object.entries(x).reverse())
              : x,
          2,
        );
        const a = comparableBody(Buffer.from(JSON.stringify(v)), 'application/json');
        const b = comparableBody(Buffer.from(shuffled), 'application/json; charset=utf-8');
        if (String(a) !== String(b)) throw new Error(`${a} != ${b}`);
      }),
      { numRuns: 500 },
    );
    // Cut-off and hostile JSON is compared as its bytes (the route then answers its 4xx).
    for (const cut of [
      '{"a": [1, 2',
      '[[[[[[[[[[',
      '{"a":1}}',
      '\u0000',
      '{"__proto__": {"x": 1}}',
    ]) {
      comparableBody(Buffer.from(cut), 'application/json');
    }
    comparableBody(Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 'application/json');
  },
);
