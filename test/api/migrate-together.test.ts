// Several processes starting on one empty database (npm run cluster, a rolling deploy) migrate one
// at a time: each start succeeds, the migrations are applied once, by one of them.
import t from 'tap';
import { migrate, openOrm } from '../../orm/database.js';
import { freshDatabase } from '../helpers/db.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(60);

t.test('three processes migrating an empty database together', async (t) => {
  const url = await freshDatabase(t, 'template0');
  const orms = await Promise.all([1, 2, 3].map(() => openOrm(url, 2)));
  t.teardown(() => Promise.all(orms.map((o) => o.close())));
  const applied = await Promise.all(orms.map((o) => migrate(o)));
  const doers = applied.filter((a) => a.length > 0);
  t.equal(doers.length, 1, 'one of them applied the migrations, the others found nothing left');
  const executed = await orms[0].getMigrator().getExecutedMigrations();
  t.same(
    doers[0],
    executed.map((m) => m.name),
    'each migration applied once, in order',
  );
  t.ok(executed.length > 10, 'the whole schema');
});
