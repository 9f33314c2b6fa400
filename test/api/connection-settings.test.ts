// Every connection the service opens carries orm/config.ts CONNECTION_SETTINGS: the ORM's pools (the
// main thread's and each worker's) and the order batch's own connection. JIT off matters for the
// event fan-out: a many-account read of a log not yet analyzed would be JIT-compiled for far longer
// than it runs.
import t from 'tap';
import { batchConnectionOf } from '../../actors/account/order-batch.js';
import { migratedOrm } from '../helpers/db.js';

t.test('the ORM pool and the order batch connection run with jit off', async (t) => {
  const { orm } = await migratedOrm(t);
  // The server's own default is on: the setting is the connection's, not the database's.
  const [server] = await orm.em
    .fork()
    .execute(`select boot_val from pg_settings where name = 'jit'`);
  t.equal(server.boot_val, 'on', 'PostgreSQL compiles by default');
  const [pooled] = await orm.em.fork().execute('show jit');
  t.equal(pooled.jit, 'off', 'a pooled connection');
  const batch = batchConnectionOf(orm.em.fork());
  t.teardown(() => batch.close());
  const client = await batch.get();
  const { rows } = await client.query('show jit');
  t.equal(rows[0].jit, 'off', 'the order batch connection');
});
