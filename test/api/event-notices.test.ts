// The event log's NOTIFYs (actors/events/log.ts): an append tells the front ends exactly which
// accounts' logs grew, in as many notices as the list needs (NOTIFY's payload is at most 8000
// bytes), so a close moving thousands of accounts wakes only their streams in every process.
import t from 'tap';
import { appendEvents, NOTIFY_MAX_BYTES } from '../../actors/events/log.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { T0 } from '../helpers/clock-rig.js';
import { eventNotices } from '../helpers/notices.js';
import { migratedOrm } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';

t.test(
  'an append notifies every account that grew, once, in notices under the payload limit',
  async (t) => {
    const { url, orm } = await migratedOrm(t);
    const em = orm.em.fork();
    // Long ids (13 digits): 3000 accounts are ~42 KB of list.
    await em.execute(`select setval('account_id_seq', 1000000000000)`);
    // Every row at one fixed instant (no service here: nothing reads it).
    const accounts = (
      await em.execute<{ id: number }[]>(
        `insert into account (kind, created_at) select 'agent', ${instantSql()} from generate_series(1, 3000) returning id::float8 as id`,
        [T0],
      )
    ).map((r) => r.id);

    const notices = await eventNotices(t, url);

    await orm.em.fork().transactional((tem) =>
      appendEvents(
        tem,
        [
          ...accounts.map((a) => ({
            account_id: a,
            type: 'funding.changed' as const,
            data: { agent_id: a, autonomous_funding: true },
          })),
          {
            account_id: accounts[7],
            type: 'funding.changed',
            data: { agent_id: accounts[7], autonomous_funding: false },
          },
        ],
        T0,
      ),
    );
    const expected = Math.ceil(
      accounts.reduce((n, a) => n + String(a).length + 1, 0) / NOTIFY_MAX_BYTES,
    );
    await eventually(() => notices.length >= expected, `${expected} notices`);
    t.ok(expected >= 5, `${expected} notices for ${accounts.length} accounts`);
    t.notOk(notices.includes('*'), 'never "every account"');
    // PostgreSQL refuses a payload of 8000 bytes or more (the append would fail); each is cut near the mark.
    t.ok(
      notices.every((p) => Buffer.byteLength(p) < 8000),
      "each notice under NOTIFY's limit",
    );
    t.ok(
      notices.slice(0, -1).every((p) => Buffer.byteLength(p) > NOTIFY_MAX_BYTES - 15),
      'each but the last filled to the mark',
    );
    const named = notices.flatMap((p) => p.split(',').map(Number));
    t.equal(named.length, accounts.length, 'each account named once (one with two events too)');
    t.same(
      [...named].sort((a, b) => a - b),
      [...accounts].sort((a, b) => a - b),
      'exactly the accounts that grew',
    );

    notices.length = 0;
    await orm.em.fork().transactional((tem) =>
      appendEvents(
        tem,
        [
          {
            account_id: accounts[2],
            type: 'funding.changed',
            data: { agent_id: accounts[2], autonomous_funding: false },
          },
        ],
        T0,
      ),
    );
    await eventually(() => notices.length >= 1, "the small append's notice");
    t.same(notices, [String(accounts[2])], 'one account: one notice naming it');
    // A rolled-back append notifies nothing: the next committed one's notice is the next to arrive
    // (notices are delivered in commit order).
    await t.rejects(
      orm.em.fork().transactional(async (tem) => {
        await appendEvents(
          tem,
          [
            {
              account_id: accounts[3],
              type: 'funding.changed',
              data: { agent_id: accounts[3], autonomous_funding: true },
            },
          ],
          T0,
        );
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await orm.em.fork().transactional((tem) =>
      appendEvents(
        tem,
        [
          {
            account_id: accounts[4],
            type: 'funding.changed',
            data: { agent_id: accounts[4], autonomous_funding: true },
          },
        ],
        T0,
      ),
    );
    await eventually(() => notices.length >= 2, "the next committed append's notice");
    t.same(
      notices,
      [String(accounts[2]), String(accounts[4])],
      'nothing from the rolled-back append',
    );
  },
);
