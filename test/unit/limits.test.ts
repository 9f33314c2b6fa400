// The per-address count of unauthenticated work (src/http/limits.ts): whatever sequence of takes and
// releases (fast-check), no key ever holds more than the cap, a release counts once however often it
// is called, and a key without a place is forgotten; the key an address is counted under (IPv6 by
// its /64, IPv4-mapped as IPv4) never throws and is the same for one client.
import t from 'tap';
import fc from 'fast-check';
import { Places, addressKey } from '../../src/http/limits.js';

t.test(
  'takes and releases in any order: never past the cap, each release once, nothing left over',
  async (t) => {
    const step = fc.oneof(
      fc.record({ take: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ release: fc.nat(40), twice: fc.boolean() }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(step, { maxLength: 60 }),
        (cap, steps) => {
          const places = new Places(cap);
          const held: { key: string; release: () => void }[] = [];
          const count = (key: string) => held.filter((h) => h.key === key).length;
          for (const s of steps) {
            if ('take' in s) {
              const release = places.take(s.take);
              if ((release === undefined) !== count(s.take) >= cap)
                throw new Error(
                  `take ${s.take} with ${count(s.take)} of ${cap} held: ${release ? 'given' : 'refused'}`,
                );
              if (release) held.push({ key: s.take, release });
            } else if (held.length) {
              const [h] = held.splice(s.release % held.length, 1);
              h.release();
              if (s.twice) h.release();
            }
            for (const key of ['a', 'b', 'c'])
              if (places.count(key) !== count(key))
                throw new Error(`${key}: ${places.count(key)} counted, ${count(key)} held`);
          }
          for (const h of held.splice(0)) h.release();
          return places.size() === 0;
        },
      ),
      { numRuns: 500 },
    );
    t.pass('500 sequences');
  },
);

t.test('the key an address is counted under', async (t) => {
  t.equal(addressKey('127.0.0.1'), '127.0.0.1');
  t.equal(addressKey('0:0:0:0:0:ffff:7f00:1'), '127.0.0.1', 'IPv4-mapped: its IPv4 address');
  t.equal(addressKey('2001:db8:1:2:0:0:0:1'), '2001:db8:1:2::/64', 'IPv6: its /64');
  t.equal(
    addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd'),
    addressKey('2001:DB8:1:2:0:0:0:99'),
    'one /64, one key',
  );
  t.not(
    addressKey('2001:db8:1:3:0:0:0:1'),
    addressKey('2001:db8:1:2:0:0:0:1'),
    'another /64, another key',
  );
  t.equal(addressKey(''), '', 'none (a request inside the process)');
  fc.assert(
    fc.property(
      fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()),
      (a) => typeof addressKey(a) === 'string',
    ),
    { numRuns: 500 },
  );
});
