// The ids a large append takes before its insert (actors/events/log.ts eventIds, the close's path):
// each account's next ids in the order given, gap-free across concurrent appends (the head rows stay
// locked until commit), nothing taken by an append that rolls back.
import t from 'tap';
import { appendEvents, eventIds } from '../../actors/events/log.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { migratedOrm } from '../helpers/db.js';
import { T0 } from '../helpers/clock-rig.js';
import { eventually } from '../helpers/wait.js';

t.test(
  'eventIds: next ids per account in order; concurrent appends wait; a rollback takes nothing',
  async (t) => {
    const { orm } = await migratedOrm(t, 4);
    // Every row at one fixed instant (no service here: nothing reads it).
    const [a, b] = (
      await orm.em
        .fork()
        .execute<{ id: number }[]>(
          `insert into account (kind, created_at) values ('agent', ${instantSql()}), ('agent', ${instantSql()}) returning id::float8 as id`,
          [T0, T0],
        )
    ).map((r) => r.id);
    const note = (account: number) => ({
      account_id: account,
      type: 'funding.changed' as const,
      data: { agent_id: account, autonomous_funding: true },
    });
    await orm.em.fork().transactional((em) => appendEvents(em, [note(a), note(a)], T0));

    t.same(
      await orm.em.fork().transactional((em) => eventIds(em, [a, b, a, a, b])),
      [3, 1, 4, 5, 2],
      "after a's head (2): a 3, 4, 5; b 1, 2",
    );
    // That transaction committed the heads without events (a close always inserts them): the next ids follow.
    await t.rejects(
      orm.em.fork().transactional(async (em) => {
        await eventIds(em, [a, b]);
        throw new Error('rolled back');
      }),
      /rolled back/,
      'an append that fails',
    );
    t.same(
      await orm.em.fork().transactional((em) => eventIds(em, [b])),
      [3],
      'the rolled-back one took nothing',
    );

    // Two appends of one account at once: the second waits on the first's head row until it commits.
    let releaseFirst!: () => void;
    let reserved!: () => void;
    const held = new Promise<void>((r) => (releaseFirst = r));
    const firstReserved = new Promise<void>((r) => (reserved = r));
    const first = orm.em.fork().transactional(async (em) => {
      const ids = await eventIds(em, [a, a]);
      reserved();
      await held;
      return ids;
    });
    await firstReserved;
    const second = orm.em.fork().transactional((em) => eventIds(em, [a]));
    await eventually(
      async () =>
        (
          await orm.em
            .fork()
            .execute(
              `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            )
        )[0].n === 1,
      'the second waiting on a lock',
    );
    releaseFirst();
    t.same([await first, await second], [[6, 7], [8]], 'gap-free, in commit order');
    await t.rejects(
      orm.em.fork().transactional((em) => eventIds(em, [999_999])),
      /foreign key/,
      'an account that does not exist: refused',
    );
  },
);
