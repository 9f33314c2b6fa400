// The console notice's cookie is client input: any value, cut off or hostile, reads as a notice of
// exactly a known code and whole numbers, or as none; it never throws.
import t from 'tap';
import fc from 'fast-check';
import { decodeNotice } from '../../src/web/console-notice.js';

t.test('any cookie value decodes to a well-formed notice or to none', async (t) => {
  const part = fc.oneof(
    fc.constantFrom('topup', 'payout', 'limits', '__proto__', 'constructor', ''),
    fc.string(),
    fc.integer().map(String),
    fc.double().map(String),
  );
  const value = fc.oneof(
    fc.string(),
    fc.array(part, { maxLength: 9 }).map((p) => p.join('.')),
  );
  fc.assert(
    fc.property(value, (v) => {
      const n = decodeNotice(v);
      if (n === null) return true;
      return Object.entries(n).every(([k, x]) =>
        k === 'kind' ? typeof x === 'string' : Number.isSafeInteger(x),
      );
    }),
    { numRuns: 2000 },
  );
  t.equal(decodeNotice('topup.1.2'), null, 'a notice cut off is none');
  t.equal(decodeNotice(undefined), null);
});
