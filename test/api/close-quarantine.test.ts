// A row the close cannot process does not stop the market:
// a paid order whose terms no longer match its menu row is refunded at the close with a reason the
// agent reads on the order, the money goes back through the ledger, the other orders of the
// session fill, and the market goes on closing. Real service and database, the clock driven.
import t from 'tap';
import { MARKETS } from '../../src/engine/index.js';
import { startTestService } from '../helpers/service.js';
import { ledgerSumCents, registerAgent, send } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';

const MARKET = 'm15';
const INTERVAL = MARKETS[MARKET].interval_seconds;
const cents = (x: number) => Math.round(x * 100);

let nowMs = (T0 + 100) * 1000; // 100 s into a session of every market
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const open = () => svc.services.supervisor.openTick(MARKET)!;

/** Moves the clock past the close of the open session `n` times over and runs the due closes. */
async function closeSessions(n: number) {
  nowMs = svc.services.clock.closesAt(open() + n - 1, INTERVAL) * 1000 + 1000;
  await svc.services.supervisor.runDue();
}

t.test(
  'a paid order with wrong terms is refunded at the close; the session closes and the market goes on',
  async (t) => {
    const agent = await registerAgent(svc);
    const holder = await registerHolder(svc);
    const menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    const tick = menu.tick;
    const placed = [];
    for (const deal of menu.deals.slice(0, 3)) {
      const o = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
      t.equal(o.status, 201);
      t.equal((await holder.pay(o.body.purchase_url)).status, 200);
      placed.push(o.body);
    }
    const [bad, ...good] = placed;
    // The planted fault: the order's copy of the terms no longer matches the menu row it names.
    await q('update orders set unit_cost_cents = unit_cost_cents + 7 where id = ?', [bad.id]);

    await closeSessions(1);
    t.equal(open(), tick + 1, 'the session closed');

    const refunded = await agent.get(`/api/v1/orders/${bad.id}`);
    t.equal(refunded.status, 200);
    t.equal(refunded.body.status, 'refunded');
    t.equal(refunded.body.position_id, null);
    t.match(
      refunded.body.refund_reason,
      new RegExp(
        `^not filled at the close of session ${tick}: its unit_cost differs from menu row ${MARKET}/${tick}/0; `,
      ),
    );
    for (const g of good) {
      const o = (await agent.get(`/api/v1/orders/${g.id}`)).body;
      t.equal(o.status, 'filled', `order ${g.id} of the same session filled`);
      t.type(o.position_id, 'number');
      t.equal(o.refund_reason, null);
    }

    const account = (await agent.get('/api/v1/account?limit=500')).body;
    const refunds = account.ledger.filter((e: any) => e.kind === 'refund');
    t.same(
      refunds.map((e: any) => [e.ref, cents(e.amount)]),
      [[`order:${bad.id}`, cents(bad.total_amount)]],
      'the total credited back once',
    );
    t.equal(cents(account.balance), ledgerSumCents(account.ledger), 'balance = Σ ledger');
    t.equal(
      cents(account.balance),
      cents(bad.total_amount),
      'what was refunded is all the account holds',
    );
    const drift =
      await q(`select a.id from account a left join ledger l on l.account_id = a.id group by a.id
                          having a.balance_cents <> coalesce(sum(l.amount_cents), 0)`);
    t.same(drift, [], 'every balance = Σ its ledger');

    // CONTRACT.md "Events": the refund is an order.refunded (the order as served) and its posting a ledger.posted.
    const events = (
      await agent.get('/api/v1/events?types=order.refunded,ledger.posted,order.filled&limit=1000')
    ).body.events;
    const refundedEvents = events.filter((e: any) => e.type === 'order.refunded');
    const { instructions: _next, ...served } = refunded.body; // what to do next is GET's answer, not part of the event
    t.same(
      refundedEvents.map((e: any) => e.data),
      [served],
      'order.refunded carries the refunded order, with its reason',
    );
    t.same(
      events
        .filter((e: any) => e.type === 'ledger.posted' && e.data.kind === 'refund')
        .map((e: any) => e.data.ref),
      [`order:${bad.id}`],
      "the refund's posting",
    );
    t.same(
      events
        .filter((e: any) => e.type === 'order.filled')
        .map((e: any) => e.data.id)
        .sort(),
      good.map((g: any) => g.id).sort(),
      'the others filled',
    );
    const round = (await agent.get('/api/v1/rounds')).body.rounds.find(
      (r: any) => r.id === bad.round_id,
    );
    t.equal(round.status, 'refunded', "the refunded order's round says so");
    t.same(
      await q('select refunded_cents::float8 as c from trade_round where id = ?', [bad.round_id]),
      [{ c: cents(bad.total_amount) }],
    );

    const logged = svc.logs.filter((l) => l.level === 50 && l.order === bad.id);
    t.equal(logged.length, 1, 'one error log names the order');
    t.match(logged[0], {
      market: MARKET,
      tick,
      msg: new RegExp(`refunded order ${bad.id} instead of filling it: .*unit_cost`),
    });
    t.match(
      await svc.get('/metrics').then((r) => r.text()),
      new RegExp(`session_close_quarantined_orders_total\\{market="${MARKET}"\\} 1\\b`),
    );

    // The market goes on: the good positions sell through their 8 sessions and settle.
    await closeSessions(MARKETS[MARKET].settlement_horizon_ticks);
    t.equal(
      open(),
      tick + 1 + MARKETS[MARKET].settlement_horizon_ticks,
      'every later session closed',
    );
    t.same(
      await q(
        `select tick::float8 as tick from market_session where market = ? and tick >= ? and closed_at is null`,
        [MARKET, tick],
      ),
      [{ tick: open() }],
      'only the current session is open',
    );
    for (const g of good) {
      const o = (await agent.get(`/api/v1/orders/${g.id}`)).body;
      t.equal((await agent.get(`/api/v1/positions/${o.position_id}`)).body.status, 'settled');
      const r = (await agent.get('/api/v1/rounds')).body.rounds.find(
        (x: any) => x.id === g.round_id,
      );
      t.equal(r.status, 'completed');
    }
    const after = (await agent.get('/api/v1/account?limit=500')).body;
    t.equal(
      cents(after.balance),
      ledgerSumCents(after.ledger),
      'balance = Σ ledger after the settlements',
    );
    t.equal(
      (await agent.get(`/api/v1/orders/${bad.id}`)).body.status,
      'refunded',
      'refunded for good',
    );
  },
);
