// Competitions (CONTRACT.md "Competitions") from join to prizes on a real database,
// the clock the test's: holders join an h2 competition, agents attached to their competition
// accounts order funded from the simulated balance (403 on another market and outside the window),
// the leaderboard ranks by return on the starting balance from settled positions, the prizes are
// paid once when it ends (also after a restart, with two services sweeping one database), and no
// real money moves except the prizes.
import t from 'tap';
import { sharedDatabaseConfig, startTestService, type TestService } from '../helpers/service.js';
import { send } from '../helpers/agents.js';
import { getPage, postForm, registerHolder } from '../helpers/web.js';
import { H2, N, W, WINDOW_START } from '../helpers/competition.js';
import { COMPETITION } from '../../src/rules.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(200); // 3 services

t.test(
  'a competition from join to prizes, paid exactly once across a restart and two services',
  async (t) => {
    let nowMs = (WINDOW_START + 100) * 1000;
    const config = await sharedDatabaseConfig(t);
    const svc = await startTestService(t, {}, { realMs: () => nowMs }, config);
    const q = (s: TestService, sql: string, p: unknown[] = []) =>
      s.orm.em.fork().execute(sql, p) as Promise<any[]>;

    const list = await send(svc, 'GET', '/api/v1/competitions');
    t.equal(list.status, 200);
    const running = list.body.competitions.filter((c: any) => c.status === 'running');
    t.same(
      running.map((c: any) => c.market).sort(),
      ['h10', 'h2', 'm15', 'm45'],
      'a running competition on every market',
    );
    const id = `h2-${W}`;
    const comp = list.body.competitions.find((c: any) => c.id === id);
    t.match(comp, {
      status: 'running',
      market: 'h2',
      starts_at: new Date(WINDOW_START * 1000).toISOString(),
      ends_at: new Date((WINDOW_START + N * H2) * 1000).toISOString(),
      starting_balance: COMPETITION.startingBalanceCents / 100,
      entrants: 0,
      prize_pool: { amount: COMPETITION.prizePoolCents / 100, currency: 'USD' },
      leaderboard: [],
    });
    t.equal(
      (await send(svc, 'GET', '/api/v1/competitions/h2-1')).status,
      404,
      'an unknown competition',
    );
    for (const path of ['/competitions', `/competitions/${id}`, '/docs/competitions'])
      t.equal((await getPage(svc, path)).status, 200, path);

    // Three holders join; joining again answers the same account.
    const holders = [
      await registerHolder(svc, 'ana@example.com'),
      await registerHolder(svc, 'ben@example.com'),
      await registerHolder(svc, 'cy@example.com'),
    ];
    const desks: number[] = [];
    for (const h of holders)
      desks.push(
        (
          await q(
            svc,
            `select id::float8 as id from account where holder_id = ? and kind = 'manual'`,
            [h.holderId],
          )
        )[0].id,
      );
    const accounts: number[] = [];
    for (const h of holders) {
      const j = await postForm(
        svc,
        `/competitions/${id}/join`,
        {},
        { cookie: h.cookie, json: true },
      );
      t.equal(j.status, 200);
      t.same(Object.keys(j.body).sort(), ['account_id', 'competition_id', 'ok']);
      accounts.push(j.body.account_id);
    }
    const again = await postForm(
      svc,
      `/competitions/${id}/join`,
      {},
      { cookie: holders[0].cookie, json: true },
    );
    t.equal(again.body.account_id, accounts[0], 'joining twice answers the same account');
    t.equal(
      (await postForm(svc, `/competitions/${id}/join`, {}, { json: true })).status,
      401,
      'joining needs a logged-in holder',
    );
    const start = await q(
      svc,
      `select kind, amount_cents::float8 as c from ledger where account_id = ?`,
      [accounts[0]],
    );
    t.same(
      start,
      [{ kind: 'topup', c: COMPETITION.startingBalanceCents }],
      'the starting balance, once',
    );
    t.equal(
      (
        await postForm(
          svc,
          '/console/topup',
          {
            account_id: accounts[0],
            amount: '5',
            method: 'new_card',
            number: '4242 4242 4242 4242',
            exp: '12/39',
            cvc: '123',
            holder: 'A',
          },
          { cookie: holders[0].cookie, json: true },
        )
      ).status,
      400,
      'no top-up of a competition account',
    );
    t.equal(
      (
        await postForm(
          svc,
          '/console/payout',
          { account_id: accounts[0], amount: '50' },
          { cookie: holders[0].cookie, json: true },
        )
      ).status,
      400,
      'no payout from it',
    );

    // Agent keys attached to the competition accounts of the first two.
    const keys: string[] = [];
    for (const i of [0, 1]) {
      const r = await postForm(
        svc,
        '/console/agents',
        { name: `Racer ${i}`, account_id: accounts[i] },
        { cookie: holders[i].cookie, json: true },
      );
      t.equal(r.status, 200);
      t.equal(r.body.account_id, accounts[i], 'the key trades the competition account');
      keys.push(r.body.key);
    }
    const auth = (i: number) => ({ authorization: `Bearer ${keys[i]}` });
    const menu = (await send(svc, 'GET', '/api/v1/markets/h2/deals?limit=50')).body;
    const balanceOf = async (account: number) =>
      (await q(svc, 'select balance_cents::float8 as b from account where id = ?', [account]))[0].b;

    const placed: any[] = [];
    for (const i of [0, 1]) {
      const o = await send(
        svc,
        'POST',
        '/api/v1/orders',
        { market: 'h2', offer_key: menu.deals[i].key, qty: 1 },
        auth(i),
      );
      t.equal(o.status, 201, JSON.stringify(o.body));
      t.match(
        o.body,
        { status: 'paid', payment_source: 'balance' },
        'funded at once from the simulated balance',
      );
      // The answer keeps its order's link (every order has one), but nothing is left to pay on it.
      t.match(
        o.body.instructions,
        'nothing is left for your holder to do',
        'no purchase link to hand over',
      );
      placed.push(o.body);
      t.equal(
        await balanceOf(accounts[i]),
        COMPETITION.startingBalanceCents - Math.round(o.body.total_amount * 100),
        'debited from the simulated balance, no fee',
      );
    }
    const m15 = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=5')).body;
    const other = await send(
      svc,
      'POST',
      '/api/v1/orders',
      { market: 'm15', offer_key: m15.deals[0].key, qty: 1 },
      auth(0),
    );
    t.equal(other.status, 403, "another market than the competition's");
    t.match(other.body.detail, 'trades market h2 only');

    // Ten sessions later both positions have settled: the leaderboard ranks them.
    nowMs = (menu.closes_at + 10 * H2) * 1000;
    await svc.services.supervisor.runDue();
    const settled = await q(
      svc,
      `select account_id::float8 as a, sum(realized_pnl_cents)::float8 as pnl, count(*)::int as n from trade where settled and account_id = any(?::bigint[]) group by account_id`,
      [`{${accounts}}`],
    );
    t.equal(settled.length, 2, 'both positions settled');
    const pnl = new Map(settled.map((r) => [r.a, r.pnl]));
    // Expected order: P&L descending, ties (the entrant without trades at 0) by earlier entry.
    const expected = accounts
      .map((a, i) => ({ a, i, pnl: pnl.get(a) ?? 0 }))
      .sort((x, y) => y.pnl - x.pnl || x.i - y.i);
    const one = (await send(svc, 'GET', `/api/v1/competitions/${id}`)).body;
    t.equal(one.entrants, 3);
    t.same(
      one.leaderboard,
      expected.map((e, r) => ({
        rank: r + 1,
        name: e.i < 2 ? `Racer ${e.i}` : `entrant ${e.a}`,
        return_pct: Math.round((e.pnl / COMPETITION.startingBalanceCents) * 10000) / 100,
        realized_pnl: e.pnl / 100,
        settled_trades: e.i < 2 ? 1 : 0,
      })),
      'ranked by return on the starting balance from settled positions',
    );
    const compLedger = await q(
      svc,
      `select distinct kind from ledger where account_id = any(?::bigint[]) order by kind`,
      [`{${accounts}}`],
    );
    t.notOk(
      compLedger.some((l) => ['card_charge', 'monthly_fee', 'payout', 'prize'].includes(l.kind)),
      'no real money on the competition accounts',
    );
    t.same(
      await q(svc, 'select holder_id from monthly_fee where holder_id = any(?::bigint[])', [
        `{${holders.map((h) => h.holderId)}}`,
      ]),
      [],
      'no participation fee',
    );

    // The window ends while the service is down; two services come up on the database and sweep.
    await svc.stop();
    nowMs = (WINDOW_START + N * H2 + 1) * 1000;
    const [second, third] = await Promise.all([
      startTestService(t, {}, { realMs: () => nowMs }, config),
      startTestService(t, {}, { realMs: () => nowMs }, config),
    ]);
    await Promise.all([second, third, second, third].map((s) => s.services.supervisor.runDue()));
    const prizes = await q(
      second,
      `select account_id::float8 as a, amount_cents::float8 as c, ref from ledger where kind = 'prize' order by id`,
    );
    const winners = expected.filter((e) => e.i < 2); // only entrants with a settled trade win
    t.same(
      prizes.map((p) => ({ a: p.a, c: p.c })),
      winners.map((w, r) => ({ a: desks[w.i], c: [15_000, 9_000][r] })),
      '50 % and 30 % of the pool to the two ranked, once, on their Manual desks',
    );
    t.ok(prizes.every((p) => p.ref === `competition:${id}`));
    t.same(
      await second.services.supervisor.runCompetitions(),
      [],
      'a later sweep finishes nothing again',
    );
    t.equal(
      (await q(third, `select count(*)::int as n from ledger where kind = 'prize'`))[0].n,
      winners.length,
      'still once',
    );

    const after = (await send(second, 'GET', `/api/v1/competitions/${id}`)).body;
    t.equal(after.status, 'finished');
    const next = (await send(second, 'GET', '/api/v1/competitions')).body.competitions.find(
      (c: any) => c.id === `h2-${W + 1}`,
    );
    t.equal(next?.status, 'running', 'the next window opened');
    const late = (await send(second, 'GET', '/api/v1/markets/h2/deals?limit=5')).body;
    const outside = await send(
      second,
      'POST',
      '/api/v1/orders',
      { market: 'h2', offer_key: late.deals[0].key, qty: 1 },
      auth(0),
    );
    t.equal(outside.status, 403, 'outside the window');
    t.match(outside.body.detail, 'is not running');

    // Real money: each holder's Manual desk has only its prize; no other account of theirs moved.
    for (const [i, h] of holders.entries()) {
      const real = await q(
        second,
        `select l.kind, l.amount_cents::float8 as c from ledger l join account a on a.id = l.account_id where a.holder_id = ? and a.kind <> 'competition'`,
        [h.holderId],
      );
      const won = winners.findIndex((w) => w.i === i);
      t.same(
        real,
        won < 0 ? [] : [{ kind: 'prize', c: [15_000, 9_000][won] }],
        `holder ${i}: only the prize`,
      );
    }
  },
);
