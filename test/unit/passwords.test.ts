// Holder passwords: scrypt round trip, a fresh salt per hash, the stored format, and refusal of
// wrong passwords and of unreadable or hostile stored values (no exception, no huge computation).
import t from 'tap';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { DECOY_HASH, hashPassword, verifyPassword } from '../../src/auth/passwords.js';

t.test('a hash verifies its password and nothing else', async (t) => {
  const h = await hashPassword('correct horse battery');
  t.match(h, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  t.ok(await verifyPassword('correct horse battery', h));
  t.notOk(await verifyPassword('correct horse batterY', h));
  t.notOk(await verifyPassword('', h));
});

t.test('the same password hashes differently each time (random salt)', async (t) => {
  const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
  t.not(a, b);
  t.ok(await verifyPassword('same password', a));
  t.ok(await verifyPassword('same password', b));
});

t.test('unicode passwords are compared in one normal form', async (t) => {
  const h = await hashPassword('caf\u00e9 au lait');
  t.ok(
    await verifyPassword('cafe\u0301 au lait', h),
    'composed and decomposed é are the same password',
  );
});

t.test('unreadable or hostile stored values never verify', async (t) => {
  const good = await hashPassword('password1');
  const parts = good.split('$');
  const bad = [
    '',
    'plain',
    'bcrypt$x',
    parts.slice(0, 5).join('$'),
    ['scrypt', 1 << 24, 8, 1, parts[4], parts[5]].join('$'), // N above the bound
    ['scrypt', 1000, 8, 1, parts[4], parts[5]].join('$'), // N not a power of two
    ['scrypt', 16384, 0, 1, parts[4], parts[5]].join('$'),
    ['scrypt', 16384, 8, 99, parts[4], parts[5]].join('$'),
    ['scrypt', 16384, 8, 1, '', parts[5]].join('$'),
  ];
  for (const b of bad)
    t.equal(await verifyPassword('password1', b), false, JSON.stringify(b.slice(0, 40)));
});

t.test('the decoy hash is a readable hash nobody can log in with', async (t) => {
  t.notOk(await verifyPassword('', DECOY_HASH));
  t.notOk(await verifyPassword('password1', DECOY_HASH));
  // The full work, counted rather than timed: verifying against the decoy runs scrypt with the
  // same cost as verifying against a real hash.
  const runs: { keyBytes: number; N?: number; r?: number; p?: number }[] = [];
  // node:crypto's scrypt replaced for this test: the named export passwords.ts imports follows it
  // (syncBuiltinESMExports), and is put back after.
  const original = crypto.scrypt;
  const spy = (
    pw: string,
    salt: Buffer,
    keyBytes: number,
    opts: crypto.ScryptOptions,
    cb: (e: Error | null, k: Buffer) => void,
  ) => {
    runs.push({ keyBytes, N: opts.N, r: opts.r, p: opts.p });
    return original(pw, salt, keyBytes, opts, cb);
  };
  (crypto as { scrypt: unknown }).scrypt = spy;
  syncBuiltinESMExports();
  t.teardown(() => {
    (crypto as { scrypt: unknown }).scrypt = original;
    syncBuiltinESMExports();
  });
  const spied = { hashPassword, verifyPassword, DECOY_HASH };
  const real = await spied.hashPassword('correct horse battery');
  runs.length = 0;
  t.ok(await spied.verifyPassword('correct horse battery', real));
  t.notOk(await spied.verifyPassword('x', spied.DECOY_HASH));
  t.equal(runs.length, 2, 'one scrypt run each');
  t.same(
    runs[1],
    runs[0],
    'verifying against the decoy does the full work of a real check (the same scrypt cost and key length)',
  );
});
